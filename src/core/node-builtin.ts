// Node's built-in modules where the runtime has them, found by a feature test
// rather than imported: the main entry runs without them (Cloudflare Workers
// without `nodejs_compat`, Vercel's edge runtime), so no file it reaches
// imports a `node:` module or has a dynamic `import()` (workerd's module form
// refuses one with a computed specifier); test/runtimes/neutral-bundle.test.ts
// bundles the main entry for a neutral platform to check both. A sandbox may
// define what it does not have as a function that throws (Next.js's edge
// runtime has `process.getBuiltinModule` throw "A Node.js API is used"), so
// every step of the test is guarded: what throws counts as missing. Nothing
// here draws random values, starts a timer or does I/O at import, which
// workerd forbids in the global scope.

/** What of `process` the feature test reads. */
export interface BuiltinHost {
  readonly getBuiltinModule?: (id: string) => unknown;
}

/**
 * Hands Node's built-in module `id` (e.g. `'node:diagnostics_channel'`) to
 * `use`, at once, where the runtime has one through `process.getBuiltinModule`
 * (Node 20.16+ and 22.3+, Bun, Deno, workerd with `nodejs_compat`); elsewhere,
 * and where looking it up or `use` throws, does nothing.
 */
export function withNodeBuiltin<T>(id: string, use: (module: T) => void): void {
  let host: BuiltinHost | undefined;
  try {
    host = (globalThis as { process?: BuiltinHost }).process;
  } catch {
    return;
  }
  withBuiltinOf(host, id, use);
}

/** {@link withNodeBuiltin} with `host` as the runtime's `process` (undefined: there is none). */
export function withBuiltinOf<T>(host: BuiltinHost | undefined, id: string, use: (module: T) => void): void {
  let module: unknown;
  try {
    if (host === undefined || host === null) return;
    const getBuiltinModule = host.getBuiltinModule;
    if (typeof getBuiltinModule !== 'function') return;
    module = getBuiltinModule.call(host, id);
  } catch {
    return;
  }
  if (module === undefined || module === null) return;
  try {
    use(module as T);
  } catch {
    // A module that is not what Node's is (a sandbox's stand-in): the caller keeps what it had without it.
  }
}
