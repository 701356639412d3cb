// The library as users run it: the compiled ESM build in dist/, which
// `npm run bench` makes first. Not the TypeScript sources through tsx: its
// transform wraps every named closure in a helper that keeps function names,
// on every call, which costs this library's hot path about 0.7 µs per
// decision that no user pays.
//
// Types come from the sources (the type check runs before anything is
// built); the values from dist/, after checking that it is not older than
// src/.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Library from '../src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist', 'esm', 'index.js');

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

const built = (await import(pathToFileURL(ENTRY).href)) as typeof Library;

export const { RollingRateLimiter, RateLimiterStack } = built;
