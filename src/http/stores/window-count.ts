// What both stores make of the hit log: the rule of a request, from the
// window and limit its host library hands over, and the answer to one
// request, from one answer of the log (one call, one Redis round trip): the
// count, and when it next changes (its reset), in the units the hosts read.
// express-rate-limit wants the reset as a moment (`resetTime`), and
// @fastify/rate-limit as a wait (`ttl`); both come from here, so the two
// stores cannot disagree on when a client is admitted again.

import type { HitCount, HitRule } from './hit-log/hit-log.js';

/**
 * When a key's count next changes: over the limit (after a hit), when a
 * request would be admitted again; else when the oldest counted hit leaves.
 * Both are rounded up to the millisecond, so they are never early.
 */
export interface Reset {
  /** The moment, in milliseconds since the epoch. */
  readonly atMs: number;
  /** Milliseconds from the moment of the answer until then (0 when it has passed). */
  readonly inMs: number;
}

/** One request's answer, as both stores report it. */
export interface WindowCount {
  /** The hits in the window (the recorded one included), capped at `limit + 1`. */
  readonly count: number;
  /** When `count` next changes; undefined when the window is empty. */
  readonly reset: Reset | undefined;
}

/** The answer of one hit-log call as the stores report it. */
export function windowCount({ count, changesAtUs, nowUs }: HitCount): WindowCount {
  if (changesAtUs === undefined) return { count, reset: undefined };
  return { count, reset: { atMs: Math.ceil(changesAtUs / 1000), inMs: Math.max(0, Math.ceil((changesAtUs - nowUs) / 1000)) } };
}

/** The rule of a request from its host's window (ms, a fraction rounded up, at least 1) and limit (rounded down). */
export function hitRule(windowMs: number, limit: number): HitRule {
  return { windowUs: Math.max(1, Math.ceil(windowMs)) * 1000, limit: Math.floor(limit) };
}
