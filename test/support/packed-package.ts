// The package as users get it: `npm pack` in this repository (its `prepack`
// builds dist/) makes the tarball, once per test run however many files ask
// for it, and throwaway projects in temp directories install it offline
// (`npm install --offline <tarball>`: it has no dependencies), each with an
// npm cache of its own. Used by the packed-package test and by the tests that
// run the package under Bun and Deno.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

let packed: Promise<string> | undefined;

/**
 * The path of this repository's tarball. The first call packs it (the build
 * takes most of the time) into a temp directory removed when the process
 * exits; every later call in the same process, from any test file, gets that
 * same file (or the same failure).
 */
export function packedTarball(): Promise<string> {
  packed ??= (async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rwl-pack-'));
    process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
    await run(NPM, ['pack', '--silent', '--pack-destination', directory], REPO);
    const tarballs = readdirSync(directory).filter((file) => file.endsWith('.tgz'));
    if (tarballs.length !== 1) throw new Error(`npm pack made ${tarballs.length} tarballs in ${directory}`);
    return join(directory, tarballs[0] as string);
  })();
  return packed;
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
