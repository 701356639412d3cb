// What both stores make of the hit log: the rule of a request, from the
// window and limit its host library hands over, and the answer to one
// request, from one answer of the log (one call, one Redis round trip): the
// count, and when it next changes (its reset), in the units the hosts read.
// express-rate-limit wants the reset as a moment (`resetTime`), and
// @fastify/rate-limit as a wait (`ttl`); both come from one wait, rounded up
// to the millisecond once, so the two stores cannot disagree on when a client
// is admitted again, and neither reads a second long.

import type { HitCount, HitRule } from './hit-log/hit-log.js';

/**
 * When a key's count next changes: with the window full (after a hit or a
 * read), when a request would be admitted again; else when the oldest
 * counted hit leaves.
 *
 * The wait is rounded up to the millisecond once, and the moment is the
 * answer's millisecond plus that wait. The answer's millisecond is what
 * `Date.now()` read when the answer was made (the microsecond clock never
 * runs ahead of it), and what a host library reads as "now" too: it then
 * rounds the rest up to whole seconds, and gets the true whole seconds (a
 * 60 s window reads 60). Rounding the moment itself up instead would add
 * the microseconds past the answer's millisecond once more, a whole second
 * too many whenever the wait is a whole number of seconds (61 for 60).
 */
export interface Reset {
  /**
   * The moment, in milliseconds since the epoch: the answer's millisecond
   * plus {@link inMs}: less than a millisecond from the exact (microsecond)
   * moment, one way or the other.
   */
  readonly atMs: number;
  /** Milliseconds from the moment of the answer until then, rounded up (0 when it has passed). */
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
  const inMs = Math.max(0, Math.ceil((changesAtUs - nowUs) / 1000));
  return { count, reset: { atMs: Math.floor(nowUs / 1000) + inMs, inMs } };
}

/** The rule of a request from its host's window (ms, a fraction rounded up, at least 1) and limit (rounded down). */
export function hitRule(windowMs: number, limit: number): HitRule {
  return { windowUs: Math.max(1, Math.ceil(windowMs)) * 1000, limit: Math.floor(limit) };
}
