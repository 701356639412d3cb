// Preloaded by `bun --preload` before tests run under Bun: every import of
// this repository's src/index.js resolves to the package installed in the
// throwaway project named by RWL_CONSUMER_DIR (its `import` entry, as a user's
// code gets it), src/http/hono/hono-middleware.js to its `/hono` entry, and
// loading any other file of src/ is an error. So the very files that run on
// Node test the built package here.

import { fileURLToPath } from 'node:url';

interface BunPluginBuilder {
  onResolve(options: { filter: RegExp }, callback: (args: { path: string; importer: string }) => { path: string }): void;
  onLoad(options: { filter: RegExp }, callback: (args: { path: string }) => never): void;
}
interface BunRuntime {
  resolveSync(specifier: string, from: string): string;
  plugin(plugin: { name: string; setup(builder: BunPluginBuilder): void }): void;
}

const bun = (globalThis as unknown as { Bun?: BunRuntime }).Bun;
if (bun === undefined) throw new Error('test/runtimes/bun/built-package.ts is a Bun preload');
const consumer = process.env.RWL_CONSUMER_DIR;
if (consumer === undefined) throw new Error('RWL_CONSUMER_DIR names the project the package is installed in');

const entry = bun.resolveSync('rolling-window-limiter', consumer);
const honoEntry = bun.resolveSync('rolling-window-limiter/hono', consumer);
const src = fileURLToPath(new URL('../../../src/', import.meta.url));
const escaped = src.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

bun.plugin({
  name: 'rolling-window-limiter, as installed',
  setup(builder) {
    builder.onResolve({ filter: /(^|\/)src\/index\.js$/ }, () => ({ path: entry }));
    builder.onResolve({ filter: /(^|\/)src\/http\/hono\/hono-middleware\.js$/ }, () => ({ path: honoEntry }));
    builder.onLoad({ filter: new RegExp(`^${escaped}`) }, (args) => {
      throw new Error(`${args.path} was loaded: under Bun the tests use the installed package alone`);
    });
  },
});

/** Where the library was loaded from (printed by the runner, checked by test/runtimes/bun.test.ts). */
export const LIBRARY_ENTRY = entry;
/** Where `rolling-window-limiter/hono` was loaded from (printed by test/runtimes/bun/hono-server.ts). */
export const HONO_ENTRY = honoEntry;
