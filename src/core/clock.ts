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

// A clock that ran ahead of the wall clock would write timestamps in the
// future, and so keep every other process's actions in the window for less
// than `interval` (over-admission). Two readings may be equal: an attempt's
// member, not its timestamp, tells it apart.
let anchorUs = Date.now() * MICROSECONDS_PER_MILLISECOND - Math.floor(performance.now() * MICROSECONDS_PER_MILLISECOND);
let lastUs = 0;

/**
 * This process's microsecond clock: `Date.now()` refined with the monotonic
 * `performance.now()`, kept within the wall clock's current millisecond (never
 * ahead of it), and non-decreasing while the wall clock does not step back.
 */
export function localMicroseconds(): number {
  const wallUs = Date.now() * MICROSECONDS_PER_MILLISECOND;
  const monotonicUs = Math.floor(performance.now() * MICROSECONDS_PER_MILLISECOND);
  let now = anchorUs + monotonicUs;
  if (now < wallUs || now >= wallUs + MICROSECONDS_PER_MILLISECOND) {
    // The refined clock left the wall clock's millisecond (it drifted, or the wall clock was set): follow the wall clock.
    anchorUs = wallUs - monotonicUs;
    now = wallUs;
  }
  if (now < lastUs && lastUs < wallUs + MICROSECONDS_PER_MILLISECOND) now = lastUs;
  lastUs = now;
  return now;
}
