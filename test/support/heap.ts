// How much the heap grows over many cycles of some work, measured after a
// warm-up and a full collection on each side (the tests run with --expose-gc).

/** The number of cycles to warm up with, and the number to measure. */
export interface HeapRun {
  readonly warmup: number;
  readonly cycles: number;
}

/** Runs `cycle(i)` `warmup` times, collects, runs it `cycles` times more, collects, and answers the heap's growth in bytes. */
export async function heapGrowth(cycle: (i: number) => Promise<void>, { warmup, cycles }: HeapRun): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run the tests with --expose-gc (the .mocharc.json does)');
  for (let i = 0; i < warmup; i += 1) await cycle(i);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = warmup; i < warmup + cycles; i += 1) await cycle(i);
  gc();
  return process.memoryUsage().heapUsed - before;
}
