// The Bun and Deno binaries that the npm packages `bun` and `deno` (dev
// dependencies) put in place with their postinstall scripts. When a script was
// blocked (`--ignore-scripts`, or npm's `allowScripts` without them), the
// package holds a placeholder or nothing: the runtime tests then fail with a
// message that says so, never skip.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedProject, packedTarball, REPO } from './packed-package.js';

/** A runtime's binary and the version it reports. */
export interface RuntimeBinary {
  readonly path: string;
  /** As the binary prints it, e.g. `1.4.5` or `deno 2.9.6`. */
  readonly version: string;
}

const BINARIES = {
  bun: join(REPO, 'node_modules', 'bun', 'bin', 'bun.exe'), // the package's name for it on every platform
  deno: join(REPO, 'node_modules', 'deno', process.platform === 'win32' ? 'deno.exe' : 'deno'),
} as const;

/** The binary of `runtime`, run once with `--version`; throws a message naming the fix when it is missing or does not run. */
export function runtimeBinary(runtime: keyof typeof BINARIES): RuntimeBinary {
  const path = BINARIES[runtime];
  const fix =
    `the npm package \`${runtime}\` (a dev dependency) installs it with its postinstall script: run \`npm ci\` with install scripts allowed ` +
    `(package.json's allowScripts lists ${runtime}; not --ignore-scripts), or \`npm rebuild ${runtime}\``;
  if (!existsSync(path)) throw new Error(`The ${runtime} binary is missing (${path}): ${fix}`);
  try {
    const version = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 }).split('\n')[0]?.trim() ?? '';
    return { path, version };
  } catch (error) {
    throw new Error(`The ${runtime} binary at ${path} does not run (${(error as Error).message.split('\n')[0]}); it may be the package's placeholder: ${fix}`, {
      cause: error,
    });
  }
}

/** A runtime's binary and a throwaway project where the packed package is installed, as the hooks set them up. */
export interface RuntimeProject {
  readonly binary: RuntimeBinary;
  /** The project's directory (type: module, the package in its node_modules). */
  readonly directory: string;
  /** The temporary directory that holds it, removed by the `after` hook. */
  readonly root: string;
}

/**
 * Registers `before` and `after` hooks on the calling describe block: the
 * runtime's binary (failing the block with the fix when it is missing), the
 * package (packed once per run) installed in `<runtime>-consumer` in a temp directory,
 * and that directory removed afterwards.
 */
export function useRuntimeProject(runtime: keyof typeof BINARIES): () => RuntimeProject {
  let project: RuntimeProject | undefined;
  let root = '';
  before(async function () {
    this.timeout(180_000);
    const binary = runtimeBinary(runtime);
    root = mkdtempSync(join(tmpdir(), `rwl-${runtime}-`));
    const directory = await installedProject(root, `${runtime}-consumer`, { type: 'module' }, await packedTarball());
    project = { binary, directory, root };
  });
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return () => {
    if (project === undefined) throw new Error(`no ${runtime} project: see the before hook`);
    return project;
  };
}
