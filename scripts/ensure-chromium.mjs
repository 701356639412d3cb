// Run by `npm run docs:check` and .ci/run before the browser check of the API site: it needs a Chromium,
// either CHROMIUM=/path/to/chromium or `chromium` on PATH (as root on Debian/Ubuntu, Debian's package is
// installed); otherwise this says how to install one and exits 1.
import { ensurePackage } from './system-tools.mjs';

process.exitCode = process.env.CHROMIUM
  ? 0
  : ensurePackage({
      who: 'ensure-chromium',
      pkg: 'chromium',
      commands: ['chromium'],
      instructions: `chromium is not installed, and the browser check of the API site needs it.
Install it, then run \`npm run docs:check\` again:
  Debian/Ubuntu:  sudo apt-get install --no-install-recommends chromium
Or name a Chromium or Chrome you already have:
  CHROMIUM=/path/to/chromium npm run docs:check
  macOS:  CHROMIUM='/Applications/Google Chrome.app/Contents/MacOS/Google Chrome' npm run docs:check`,
    });
