/** Index of the first element of ascending `sorted` that is greater than `value`. */
export function firstIndexAbove(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) > value) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Inserts `value` into ascending `sorted`, after any equal elements. */
export function insertSorted(sorted: number[], value: number): void {
  const last = sorted[sorted.length - 1];
  if (last === undefined || value >= last) sorted.push(value);
  else sorted.splice(firstIndexAbove(sorted, value), 0, value);
}
