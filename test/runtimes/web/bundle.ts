// Bundles a file for a runtime with web APIs only (workerd without
// `nodejs_compat`, Vercel's edge runtime) with esbuild, as a user's build step
// would: everything it imports (the library's src/, chai, @upstash/redis,
// Hono) is in the bundle, resolved with the runtime's export conditions, and
// an import of any Node built-in fails the build, naming who imports it.

import { build, type Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';

const NODE_BUILTIN = new RegExp(`^(node:.*|(${builtinModules.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(/.*)?)$`);

/** Refuses every Node built-in: the runtimes bundled for here have none. */
const noNodeBuiltins: Plugin = {
  name: 'no-node-builtins',
  setup(bundle) {
    bundle.onResolve({ filter: NODE_BUILTIN }, ({ path, importer }) => ({
      errors: [{ text: `${path}, a Node built-in, imported by ${importer}: the runtime has no Node built-ins` }],
    }));
  },
};

/** How to bundle. */
export interface WebBundleOptions {
  /** `esm` for a module Worker, `iife` for the edge runtime's script. */
  readonly format: 'esm' | 'iife';
  /** The export conditions the runtime's bundler uses (wrangler: workerd, worker, browser; Next.js on the edge: edge-light, worker, browser). */
  readonly conditions: readonly string[];
  /** Module names to replace with files, as a user's framework provides them (e.g. `next/server`). */
  readonly alias?: Readonly<Record<string, string>>;
  /** For `iife`: the global the entry's exports are put in. */
  readonly globalName?: string;
  /** Changes the entry's source before it is bundled (e.g. a snippet's option, to run it both ways). */
  readonly editEntry?: (source: string) => string;
}

/** Hands the entry's source through `edit` as esbuild loads it. */
function editedEntry(entry: string, edit: (source: string) => string): Plugin {
  return {
    name: 'edited-entry',
    setup(bundle) {
      bundle.onLoad({ filter: /\.ts$/ }, async ({ path }) =>
        path === entry ? { contents: edit(await readFile(path, 'utf8')), loader: 'ts', resolveDir: dirname(path) } : undefined,
      );
    },
  };
}

/** The bundled code of `entry`. */
export async function bundleForWeb(entry: string, { format, conditions, alias, globalName, editEntry }: WebBundleOptions): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: [...conditions],
    format,
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    sourcemap: false,
    ...(alias === undefined ? {} : { alias: { ...alias } }),
    ...(globalName === undefined ? {} : { globalName }),
    // The model tests read MODEL_SCHEDULES and MODEL_SEED from process.env on Node; there is no process here.
    define: { 'process.env.MODEL_SCHEDULES': 'undefined', 'process.env.MODEL_SEED': 'undefined' },
    plugins: editEntry === undefined ? [noNodeBuiltins] : [noNodeBuiltins, editedEntry(resolve(entry), editEntry)],
  });
  return result.outputFiles[0]!.text;
}
