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

/** Inserts `value` into ascending `sorted`, after any equal elements; returns where it went. */
export function insertSorted(sorted: number[], value: number): number {
  const last = sorted[sorted.length - 1];
  const index = last === undefined || value >= last ? sorted.length : firstIndexAbove(sorted, value);
  if (index === sorted.length) sorted.push(value);
  else sorted.splice(index, 0, value);
  return index;
}
