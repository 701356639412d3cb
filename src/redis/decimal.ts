// Timestamps travel to Redis as decimal strings. `String(n)` of a 16-digit
// number (a microsecond timestamp) takes V8's general path for doubles, about
// 150 ns here; its two halves below 10^8 are int32 values, which V8 writes
// out on a fast path, and the whole conversion takes about 60 ns. Twice per
// decision, on the hottest path there is.

const HALF = 100_000_000;

/**
 * The decimal string of a safe integer, exactly as `String(value)` writes it.
 * Only whole numbers of 10^8 and above take the split path; anything else is
 * `String(value)` itself.
 */
export function decimalString(value: number): string {
  if (value < HALF || !Number.isSafeInteger(value)) return String(value);
  const high = Math.floor(value / HALF);
  return `${high}${String(HALF + (value - high * HALF)).slice(1)}`;
}
