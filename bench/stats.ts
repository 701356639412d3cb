// Small statistics helpers: medians over runs and latency percentiles.

/** The median of some numbers (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const finite = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = finite.length >> 1;
  return finite.length % 2 === 1 ? (finite[middle] as number) : ((finite[middle - 1] as number) + (finite[middle] as number)) / 2;
}

/** Smallest and largest finite value, or NaN for none. */
export function range(values: readonly number[]): [number, number] {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return [Number.NaN, Number.NaN];
  return [Math.min(...finite), Math.max(...finite)];
}

/** The p-th percentile (0 < p < 100, nearest rank) of sorted samples. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** A / B, NaN unless both are finite and B is positive. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return Number.NaN;
  return a / b;
}
