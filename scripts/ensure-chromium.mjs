// Install guard run by `npm run docs:check` (and .ci/run) before the browser
// check of the API site: makes sure a headless Chromium is there. Either the
// user names one (CHROMIUM=/path/to/chromium), or `chromium` is on PATH, or
// (Debian/Ubuntu, as root) we install Debian's chromium package. Otherwise it
// prints how to install Chromium and exits 1. No dependencies.

import { spawnSync } from 'node:child_process';
import { isOnPath, isRoot, run } from './system-tools.mjs';

const INSTALL_INSTRUCTIONS = [
  'chromium is not installed, and the browser check of the API site needs a headless Chromium.',
  'Install it, then run `npm run docs:check` again:',
  '  Debian/Ubuntu:  sudo apt-get install --no-install-recommends chromium',
  'Or name a Chromium or Chrome you already have:',
  '  CHROMIUM=/path/to/chromium npm run docs:check',
  "  macOS:  CHROMIUM='/Applications/Google Chrome.app/Contents/MacOS/Google Chrome' npm run docs:check",
].join('\n');

function installWithAptGet() {
  console.log("ensure-chromium: chromium is missing; installing it with `apt-get install --no-install-recommends chromium` (Debian's package).");
  const noPrompts = { DEBIAN_FRONTEND: 'noninteractive' };
  if (!run('ensure-chromium', 'apt-get', ['update'], noPrompts)) {
    console.warn('ensure-chromium: `apt-get update` failed; trying the install with the package lists we have.');
  }
  return run('ensure-chromium', 'apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], noPrompts);
}

function chromiumRuns() {
  const result = spawnSync('chromium', ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0;
}

function main() {
  if (process.env.CHROMIUM) return 0;
  if (isOnPath('chromium')) return 0;

  if (isOnPath('apt-get') && isRoot()) {
    if (installWithAptGet() && chromiumRuns()) {
      console.log('ensure-chromium: chromium is installed.');
      return 0;
    }
    console.error('ensure-chromium: installing chromium with apt-get failed (see the output above).');
    console.error(INSTALL_INSTRUCTIONS);
    return 1;
  }

  console.error(INSTALL_INSTRUCTIONS);
  return 1;
}

process.exitCode = main();
