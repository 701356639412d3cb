// How the workerd and edge-runtime tests start their runtimes, and the export
// conditions each one's usual bundler resolves imports with.

import { Miniflare } from 'miniflare';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../../support/packed-package.js';

/** What wrangler resolves a Worker's imports with. */
export const WORKERD_CONDITIONS = ['workerd', 'worker', 'browser'] as const;
/** What Next.js resolves imports with when it bundles for the edge runtime. */
export const EDGE_CONDITIONS = ['edge-light', 'worker', 'browser'] as const;
/** Any date workerd 2026-04-26 knows; no compatibility flags at all. */
export const COMPATIBILITY_DATE = '2026-04-01';

/** The version of an installed package. */
export const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * A workerd (miniflare's) running `code` as a module Worker, with no compatibility flags (no nodejs_compat), and these
 * bindings. `modules: true` has miniflare find the module's imports itself, as for a Worker given to miniflare as a
 * file, and it refuses a dynamic `import()` of a computed specifier (ERR_MODULE_DYNAMIC_SPEC).
 */
export function workerdFor(code: string, bindings: Record<string, string> = {}): Miniflare {
  return new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [],
    bindings,
  });
}
