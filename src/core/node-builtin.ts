// Node's built-in modules where the runtime has them, found by a feature test
// rather than imported: the main entry runs without them (Cloudflare Workers
// without `nodejs_compat`, Vercel's edge runtime), so no file it reaches
// imports a `node:` module (test/runtimes/neutral-bundle.test.ts bundles it
// for a neutral platform to check). Nothing here draws random values, starts a
// timer or does I/O at import, which workerd forbids in the global scope.

/** What of `process` the feature test reads. */
export interface BuiltinHost {
  readonly getBuiltinModule?: (id: string) => unknown;
  readonly versions?: { readonly node?: unknown };
}

/**
 * Hands Node's built-in module `id` (e.g. `'node:diagnostics_channel'`) to
 * `use` where the runtime has one: at once where `process.getBuiltinModule`
 * exists (Node 20.16+ and 22.3+, Bun, Deno, workerd with `nodejs_compat`);
 * on an older Node 20, a few ticks later, through a dynamic import (hidden
 * from bundlers, which need not resolve it); elsewhere never.
 */
export function withNodeBuiltin<T>(id: string, use: (module: T) => void): void {
  withBuiltinOf((globalThis as { process?: BuiltinHost }).process, id, use);
}

/** {@link withNodeBuiltin} with `host` as the runtime's `process` (undefined: there is none). */
export function withBuiltinOf<T>(host: BuiltinHost | undefined, id: string, use: (module: T) => void): void {
  if (host === undefined || host === null) return;
  if (typeof host.getBuiltinModule === 'function') {
    const module = host.getBuiltinModule(id);
    if (module !== undefined && module !== null) use(module as T);
    return;
  }
  if (typeof host.versions?.node !== 'string') return;
  import(/* webpackIgnore: true */ /* @vite-ignore */ id).then(
    (module: T) => use(module),
    () => undefined,
  );
}
