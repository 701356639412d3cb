/**
 * A source of time for a limiter: integer microseconds since the Unix epoch.
 * Tests inject one to walk through time without sleeping.
 */
export type MicrosecondClock = () => number;

/** Microseconds in one millisecond. */
export const MICROSECONDS_PER_MILLISECOND = 1000;

/** Converts whole milliseconds to microseconds. */
export function millisecondsToMicroseconds(ms: number): number {
  return ms * MICROSECONDS_PER_MILLISECOND;
}

/** Converts microseconds to milliseconds, rounding up so a wait is never reported short. */
export function microsecondsToWholeMillisecondsUp(us: number): number {
  return Math.ceil(us / MICROSECONDS_PER_MILLISECOND);
}

// The process clock: wall-clock milliseconds refined to microseconds with the
// monotonic `performance.now()`, re-anchored whenever the two disagree about
// the current millisecond (NTP adjustments, long-running processes), and made
// strictly increasing so that two calls never share a timestamp.
let anchorUs = Date.now() * MICROSECONDS_PER_MILLISECOND - Math.floor(performance.now() * MICROSECONDS_PER_MILLISECOND);
let lastUs = 0;

/**
 * This process's microsecond clock: integer microseconds since the Unix
 * epoch, following the wall clock to the millisecond, and strictly increasing
 * across all limiters of the process. Needs no native code.
 */
export function localMicroseconds(): number {
  const monotonicUs = Math.floor(performance.now() * MICROSECONDS_PER_MILLISECOND);
  let now = anchorUs + monotonicUs;
  const wallMs = Date.now();
  if (Math.floor(now / MICROSECONDS_PER_MILLISECOND) !== wallMs) {
    anchorUs = wallMs * MICROSECONDS_PER_MILLISECOND - monotonicUs;
    now = anchorUs + monotonicUs;
  }
  if (now <= lastUs) now = lastUs + 1;
  lastUs = now;
  return now;
}
