// Run by ensure-redis-server.mjs, so by `npm test` and .ci/run (and on its own: `node scripts/ensure-valkey-server.mjs`):
// the Valkey contract tests start their own valkey-server 8 (and valkey-cli for a cluster), or use VALKEY_URL.
// When valkey-server is missing, as root on Debian this installs Debian's valkey-server package from the
// `<codename>-backports` suite (Debian 12 has Valkey 8 only there), adding that suite to apt's sources if it is
// not there yet: the same mirror and keyring as the machine's own Debian entries, read from its apt sources at run
// time. Service starts are denied during the install, so no system Valkey takes a port. Anywhere else this prints
// the exact commands to install it and exits 1; it never skips.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findOnPath } from './system-tools.mjs';

const WHO = 'ensure-valkey-server';
const COMMANDS = ['valkey-server', 'valkey-cli'];
/** The major version the tests are meant for. */
const WANTED_MAJOR = 8;
const SOURCES = '/etc/apt/sources.list';
const SOURCE_PARTS = '/etc/apt/sources.list.d';

/** Debian asks policy-rc.d before starting a service; 101 forbids it, so no system server takes a port. */
export function withServiceStartsDenied(install, who = 'scripts/ensure-valkey-server.mjs') {
  const policy = '/usr/sbin/policy-rc.d';
  if (existsSync(policy)) return install(); // an existing policy is left as it is
  writeFileSync(policy, `#!/bin/sh\n# Temporary, written by ${who}.\nexit 101\n`, { mode: 0o755 });
  try {
    return install();
  } finally {
    unlinkSync(policy);
  }
}

/** The `ID` and `VERSION_CODENAME` of /etc/os-release (empty where there is none). */
function osRelease() {
  let text = '';
  try {
    text = readFileSync('/etc/os-release', 'utf8');
  } catch {
    // not Linux, or no os-release
  }
  const field = (name) => new RegExp(`^${name}=["']?([^"'\\n]*)`, 'm').exec(text)?.[1] ?? '';
  return { id: field('ID'), codename: field('VERSION_CODENAME') };
}

/** The files apt reads its sources from: sources.list, then sources.list.d/*.list and *.sources. */
function sourceFiles() {
  let parts = [];
  try {
    parts = readdirSync(SOURCE_PARTS)
      .filter((name) => /^[\w.-]+\.(list|sources)$/.test(name))
      .sort()
      .map((name) => join(SOURCE_PARTS, name));
  } catch {
    // no sources.list.d
  }
  return [SOURCES, ...parts].filter((file) => existsSync(file));
}

/**
 * The `deb` entries of apt's sources, one-line (`deb [signed-by=…] uri suite components`) and deb822 (`Types:`,
 * `URIs:`, `Suites:`, `Signed-By:` stanzas, `Enabled: no` left out), as `{ uris, suites, signedBy, file }`.
 */
export function debEntries(files = sourceFiles()) {
  const entries = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const fields = new Map();
        let last;
        for (const line of stanza.split('\n')) {
          if (line.startsWith('#')) continue;
          const field = /^([\w-]+):\s*(.*)$/.exec(line);
          if (field) fields.set((last = field[1].toLowerCase()), field[2].trim());
          else if (/^\s+\S/.test(line) && last !== undefined) fields.set(last, `${fields.get(last)}\n${line.trim()}`);
        }
        const words = (name) => (fields.get(name) ?? '').split(/\s+/).filter(Boolean);
        if (!words('types').includes('deb') || /^(no|false)$/i.test(fields.get('enabled') ?? '')) continue;
        entries.push({ uris: words('uris'), suites: words('suites'), signedBy: fields.get('signed-by'), file });
      }
    } else {
      for (const line of text.split('\n')) {
        const match = /^\s*deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)/.exec(line);
        if (!match) continue;
        const signedBy = /(?:^|\s)signed-by=(\S+)/.exec(match[1] ?? '')?.[1];
        entries.push({ uris: [match[2]], suites: [match[3]], signedBy, file });
      }
    }
  }
  return entries;
}

/** The deb822 stanza of `<codename>-backports` on the mirror (and with the keyring) of the entry of `<codename>` itself. */
export function backportsStanza(entries, codename) {
  const release = entries.find((entry) => entry.suites.includes(codename) && entry.uris.length > 0);
  if (release === undefined) return undefined;
  const lines = [
    `# Written by scripts/ensure-valkey-server.mjs (the rolling-window-limiter tests): Debian's backports suite, for valkey-server ${WANTED_MAJOR}.`,
    `# Same mirror and keyring as the ${codename} entry of ${release.file}.`,
    'Types: deb',
    `URIs: ${release.uris.join(' ')}`,
    `Suites: ${codename}-backports`,
    'Components: main',
  ];
  if (release.signedBy !== undefined) {
    // A key inline (several lines) is continued with a leading space on each line, as deb822 wants.
    lines.push(`Signed-By: ${release.signedBy.split('\n').join('\n ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `valkey-server --version`'s version (`8.1.1`), or undefined when it does not run. */
function installedVersion() {
  const result = spawnSync('valkey-server', ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0 ? (/v=(\d+\.\d+\.\d+)/.exec(result.stdout)?.[1] ?? result.stdout.trim()) : undefined;
}

/** Runs apt-get quietly; its output is shown only when it fails. */
function aptGet(...args) {
  const result = spawnSync('apt-get', ['-q', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) {
    console.error(`${WHO}: apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}):`);
    console.error(`${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n'));
  }
  return result.status === 0;
}

/** The one-line apt source of `<codename>-backports` on the mirror (and keyring, when it is a file) of the `<codename>` entry. */
function backportsLine(entries, codename) {
  const release = entries.find((entry) => entry.suites.includes(codename) && entry.uris.length > 0);
  if (release === undefined) return undefined;
  const keyring = release.signedBy !== undefined && !release.signedBy.includes('\n') ? `[signed-by=${release.signedBy}] ` : '';
  return `deb ${keyring}${release.uris[0]} ${codename}-backports main`;
}

/** The commands that install valkey-server 8 here, for the message shown when this cannot do it itself. */
function instructions({ id, codename }, entries, hasBackports) {
  const line = backportsLine(entries, codename);
  const install = `sudo apt-get update && sudo apt-get install -t ${codename}-backports valkey-server`;
  const debian =
    id === 'debian' && (hasBackports || line !== undefined)
      ? [
          `  This Debian (${codename}), from its ${codename}-backports suite${hasBackports ? " (already in apt's sources)" : ''}:`,
          ...(hasBackports ? [] : [`    echo '${line}' | sudo tee /etc/apt/sources.list.d/${codename}-backports.list`]),
          `    ${install}`,
        ]
      : [
          '  Debian 12 (bookworm): add the bookworm-backports suite of your Debian mirror to apt, then',
          '    sudo apt-get update && sudo apt-get install -t bookworm-backports valkey-server',
          '  Debian 13 and later, or another distribution with Valkey 8:  sudo apt-get install valkey-server',
        ];
  return [
    `valkey-server is not installed, and the Valkey tests need valkey-server ${WANTED_MAJOR} and valkey-cli (they start their own servers on 127.0.0.1).`,
    'Install it, then run `npm test` again:',
    ...debian,
    '  macOS:  brew install valkey',
    'Or use a Valkey server you already run:',
    '  VALKEY_URL=redis://127.0.0.1:6380 npm test',
    '  (warning: the tests write and delete keys on that server; do not point it at data you care about)',
  ].join('\n');
}

/**
 * Returns 0 when valkey-server and valkey-cli are on PATH (or VALKEY_URL names a server); otherwise installs them as
 * root on Debian and returns 0 once `valkey-server --version` runs; otherwise prints how to install them and returns 1.
 */
export function ensureValkeyServer() {
  if (process.env.VALKEY_URL) return 0;
  if (COMMANDS.every((command) => findOnPath(command))) {
    const version = installedVersion();
    if (version !== undefined && Number.parseInt(version, 10) < WANTED_MAJOR) {
      console.warn(`${WHO}: valkey-server ${version} is installed; the Valkey tests are meant for ${WANTED_MAJOR}.x.`);
    }
    return 0;
  }
  const os = osRelease();
  let entries = [];
  try {
    entries = debEntries();
  } catch (error) {
    console.warn(`${WHO}: could not read apt's sources (${error.message}).`);
  }
  const backports = `${os.codename}-backports`;
  const hasBackports = entries.some((entry) => entry.suites.includes(backports));
  const stanza = backportsStanza(entries, os.codename);
  if (os.id === 'debian' && os.codename !== '' && findOnPath('apt-get') && process.getuid?.() === 0 && (hasBackports || stanza !== undefined)) {
    if (!hasBackports) {
      const file = join(SOURCE_PARTS, `${backports}.sources`);
      writeFileSync(file, stanza);
      console.log(`${WHO}: added Debian's ${backports} suite to apt (${file}), on the mirror of the ${os.codename} entry.`);
    }
    console.log(`${WHO}: valkey-server is missing; installing Debian's valkey-server from ${backports} with apt-get.`);
    const installed = withServiceStartsDenied(() => {
      if (!aptGet('update')) console.warn(`${WHO}: apt-get update failed; installing with the package lists we have.`);
      return aptGet('install', '-y', '--no-install-recommends', '-t', backports, 'valkey-server');
    });
    const version = installed ? installedVersion() : undefined;
    if (version !== undefined && COMMANDS.every((command) => findOnPath(command))) {
      console.log(`${WHO}: valkey-server ${version} is installed.`);
      return 0;
    }
    console.error(`${WHO}: installing valkey-server with apt-get failed.`);
  }
  console.error(instructions(os, entries, hasBackports));
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = ensureValkeyServer();
