// What a RateLimiterStack needs to know about the limiters it stacks, kept
// out of their public surface.

import type { MicrosecondClock } from './clock.js';
import type { WindowRule } from './decision.js';
import type { KeyScheme } from './keys.js';
import type { Store } from './stores/store.js';

/** A limiter's rules, store, keys and clock. */
export interface LimiterInternals {
  readonly rule: WindowRule;
  readonly store: Store;
  readonly keys: KeyScheme;
  /** The `clock` option as given: compared when limiters are stacked. */
  readonly clockOption: 'local' | 'redis' | MicrosecondClock;
  /** Reads the time for an attempt; undefined when the store reads it (`clock: 'redis'`). */
  readonly readClock: (() => number) | undefined;
  readonly timeout: number;
  /** The `useScript` option. */
  readonly useScript: boolean | undefined;
}

const registry = new WeakMap<object, LimiterInternals>();

export function registerInternals(limiter: object, internals: LimiterInternals): void {
  registry.set(limiter, internals);
}

export function internalsOf(limiter: unknown): LimiterInternals | undefined {
  return typeof limiter === 'object' && limiter !== null ? registry.get(limiter) : undefined;
}
