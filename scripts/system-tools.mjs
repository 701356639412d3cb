// Shared by the install guards (ensure-redis-server.mjs, ensure-chromium.mjs) and the browser check.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The path of the executable `name` on PATH, if there is one. */
export function findOnPath(name) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((directory) => join(directory, name))
    .find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/**
 * Returns 0 if `commands` are on PATH. Otherwise, as root on Debian/Ubuntu, installs Debian's `pkg` with apt-get
 * (inside `wrap`) and returns 0 if `commands[0] --version` then runs; else prints `instructions` and returns 1.
 */
export function ensurePackage({ who, pkg, commands, instructions, wrap = (install) => install() }) {
  if (commands.every((command) => findOnPath(command))) return 0;
  if (findOnPath('apt-get') && process.getuid?.() === 0) {
    console.log(`${who}: ${commands[0]} is missing; installing Debian's ${pkg} package with apt-get.`);
    const aptGet = (...args) => spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
    const installed = wrap(() => {
      if (!aptGet('update')) console.warn(`${who}: apt-get update failed; installing with the package lists we have.`);
      return aptGet('install', '-y', '--no-install-recommends', pkg);
    });
    if (installed && spawnSync(commands[0], ['--version'], { timeout: 30_000 }).status === 0) {
      console.log(`${who}: ${pkg} is installed.`);
      return 0;
    }
    console.error(`${who}: installing ${pkg} with apt-get failed (see the output above).`);
  }
  console.error(instructions);
  return 1;
}
