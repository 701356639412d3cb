// Small helpers shared by the install guards (ensure-redis-server.mjs,
// ensure-chromium.mjs): finding a program, knowing whether we are root, and
// running a command with its output shown. No dependencies.

import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True if `name` is an executable file in one of the PATH directories. */
export function isOnPath(name) {
  const directories = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return directories.some((directory) => {
    try {
      accessSync(join(directory, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** True when this process runs as root (so apt-get can install). */
export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Runs a command with inherited stdio; returns true if it exited 0. `who` prefixes the error message. */
export function run(who, command, args, extraEnv = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...extraEnv } });
  if (result.error) console.error(`${who}: could not run ${command}: ${result.error.message}`);
  return result.status === 0;
}
