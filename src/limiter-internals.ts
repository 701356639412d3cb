// What a RateLimiterStack needs to know about the limiters it stacks, kept
// out of their public surface.

import type { MicrosecondClock } from './core/clock.js';
import type { TierSpec } from './core/tiered-core.js';

/** A limiter's tier, clock and timeout. */
export interface LimiterInternals {
  readonly tier: TierSpec;
  /** The `clock` option as given: compared when limiters are stacked. */
  readonly clockOption: 'local' | 'redis' | MicrosecondClock;
  /** Reads the time for an attempt; undefined when the store reads it (`clock: 'redis'`). */
  readonly readClock: (() => number) | undefined;
  readonly timeout: number;
}

const registry = new WeakMap<object, LimiterInternals>();

export function registerInternals(limiter: object, internals: LimiterInternals): void {
  registry.set(limiter, internals);
}

export function internalsOf(limiter: unknown): LimiterInternals | undefined {
  return typeof limiter === 'object' && limiter !== null ? registry.get(limiter) : undefined;
}
