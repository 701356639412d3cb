// The three tiers of the stack contenders, shared by the library's 3-tier
// stack (./library.ts) and its bare Lua floor (./floors.ts), so that both
// decide with the same numbers on keys of the same shape.

import type { Rules } from './types.js';

const DAY_MS = 86_400_000;

/** One tier of the stack: its own namespace (keys `<namespace>:{<id>}`) and rule. */
export interface StackTier {
  readonly namespace: string;
  readonly interval: number;
  readonly maxInInterval: number;
  readonly minDifference: number;
}

/**
 * Per second (max floor(max / 2), at least 1), per minute (the scenario's own
 * rule, whatever its interval: the tier a single limiter of the same scenario
 * enforces) and per day (max × 100). Only the per-minute tier takes the
 * scenario's gap rule (0 in every Redis scenario). Namespaces:
 * `${namespace}-second|minute|day`; the per-minute tier's key is the one that
 * stands for the id (MEMORY USAGE, pre-filling).
 */
export function stackTiers(rules: Rules, namespace: string): readonly [second: StackTier, minute: StackTier, day: StackTier] {
  return [
    { namespace: `${namespace}-second`, interval: 1_000, maxInInterval: Math.max(1, Math.floor(rules.maxInInterval / 2)), minDifference: 0 },
    { namespace: `${namespace}-minute`, interval: rules.interval, maxInInterval: rules.maxInInterval, minDifference: rules.minDifference },
    { namespace: `${namespace}-day`, interval: DAY_MS, maxInInterval: rules.maxInInterval * 100, minDifference: 0 },
  ];
}
