// The library as users run it: the compiled build in dist/, which
// `npm run bench` makes first. Not the TypeScript sources through tsx: its
// transform wraps every named closure in a helper that keeps function names,
// on every call, which costs this library's hot path about 0.7 µs per
// decision that no user pays.
//
// Each contender gets a copy of its own (`freshLibrary()`): the CommonJS
// build, required afresh with its module cache cleared. A process that uses
// the library has one client and a mode or two. The throughput measurement
// runs each contender in a child process of its own anyway; the bytes and
// memory-per-key measurements build several library contenders in the bench
// process, and one shared copy would run their calls through the same call
// sites, which V8 then optimizes for every shape at once (measured: 3.5 → 6.7
// µs of client CPU above the bare MULTI floor per node-redis decision).
//
// Types come from the sources (the type check runs before anything is
// built); the values from dist/, after checking that it is not older than
// src/.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Library from '../src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = join(ROOT, 'dist', 'cjs');
const ENTRY = join(BUILD, 'index.js');

function newestModification(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs);
  }
  return newest;
}

if (!existsSync(ENTRY)) {
  throw new Error(`The benchmark measures the built library, and ${ENTRY} is missing: run \`npm run bench\` (which builds first) or \`npm run build\``);
}
if (statSync(ENTRY).mtimeMs < newestModification(join(ROOT, 'src'))) {
  throw new Error('src/ changed after the last build: run `npm run bench` (which builds first) or `npm run build`, so the benchmark measures the code you have');
}

const require = createRequire(import.meta.url);

/** The built library's exports. */
export type BuiltLibrary = typeof Library;

/** A copy of the built library that shares no module, and so no function, with any other copy. */
export function freshLibrary(): BuiltLibrary {
  for (const path of Object.keys(require.cache)) {
    if (path.startsWith(BUILD + sep)) delete require.cache[path];
  }
  return require(ENTRY) as BuiltLibrary;
}
