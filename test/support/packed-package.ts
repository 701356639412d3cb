// The package as users get it: `npm pack` in this repository (its `prepack`
// builds dist/) makes the tarball, and throwaway projects in temp directories
// install it offline (`npm install --offline <tarball>`: it has no
// dependencies), each with an npm cache of its own. Used by the packed-package
// test and by the tests that run the package under Bun and Deno.

import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** Longest any one command may take. */
const COMMAND_TIMEOUT_MS = 90_000;

/** The environment for child commands: without the npm_* variables of an enclosing `npm test`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== 'INIT_CWD') env[name] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command (killed past `timeoutMs`); resolves with its stdout, rejects with its output when it fails. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  { env = cleanEnv(), timeoutMs = COMMAND_TIMEOUT_MS }: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Packs this repository into `root/pack` and returns the tarball's path. */
export async function packPackage(root: string): Promise<string> {
  const packDirectory = join(root, 'pack');
  mkdirSync(packDirectory);
  await run(NPM, ['pack', '--silent', '--pack-destination', packDirectory], REPO);
  const packed = readdirSync(packDirectory).filter((file) => file.endsWith('.tgz'));
  if (packed.length !== 1) throw new Error(`npm pack made ${packed.length} tarballs in ${packDirectory}`);
  return join(packDirectory, packed[0] as string);
}

/** Makes `root/name` a project with this package.json and the tarball installed offline; returns its directory. */
export async function installedProject(root: string, name: string, manifest: object, tarball: string): Promise<string> {
  const directory = join(root, name);
  mkdirSync(directory);
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, ...manifest }, null, 2));
  // A cache of its own: the install needs nothing but the tarball.
  await run(NPM, ['install', '--no-audit', '--no-fund', '--offline', '--cache', join(root, 'npm-cache', name), tarball], directory);
  return directory;
}
