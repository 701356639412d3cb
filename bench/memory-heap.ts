// Child process of the heap measurement (measure 6), one contender per process
// so that heaps do not mix:
//
//   node --expose-gc --import tsx bench/memory-heap.ts <lib-memory|rrl-memory|rlf-memory> <ids>
//
// Makes one allowed decision for each of <ids> distinct ids (100 per minute)
// and prints, as one JSON line, the heap used per million ids after a full GC.
// For this library a second wave follows once the first ids' windows have
// passed (the injected clock and Date.now() jump past the interval): if memory is bounded by
// the ids active within the last interval, the heap after the second wave is
// about the heap after the first.

import { RateLimiterMemory } from 'rate-limiter-flexible';
import { InMemoryRateLimiter } from 'rolling-rate-limiter';
import { freshLibrary } from './built-library.js';
import { MEMORY_RULES } from './workloads.js';

export interface HeapReport {
  readonly contender: string;
  readonly ids: number;
  /** heapUsed growth per million ids after the first wave, bytes. */
  readonly heapPerMillionIds: number;
  /** heapUsed growth per million ids after a second wave of new ids, once the first wave expired (this library only). */
  readonly heapPerMillionIdsAfterSecondWave?: number;
  readonly seconds: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function wave(limit: (id: string) => Promise<boolean>, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 1) {
    if (await limit(`user${i}`)) throw new Error(`id user${i} was blocked on its first action`);
  }
}

async function main(): Promise<void> {
  const [contender, idsArg] = process.argv.slice(2);
  const ids = Number(idsArg);
  if (!Number.isSafeInteger(ids) || ids < 1) throw new TypeError('usage: memory-heap.ts <contender> <ids>');
  const perMillion = (bytes: number): number => (bytes * 1_000_000) / ids;
  const started = performance.now();
  let report: HeapReport;

  if (contender === 'lib-memory') {
    let nowUs = Date.now() * 1000;
    const clock = (): number => (nowUs += 1);
    const { RollingRateLimiter } = freshLibrary();
    const limiter = new RollingRateLimiter({ ...MEMORY_RULES, clock });
    const baseline = heapUsed();
    await wave((id) => limiter.limit(id), 0, ids);
    const first = heapUsed() - baseline;
    // The store forgets an id by the wall clock (Date.now(), as Redis expires a key), and judges the window by the
    // injected clock: move both past the interval.
    const jumpMs = MEMORY_RULES.interval + 1_000;
    const wallClock = Date.now;
    Date.now = () => wallClock() + jumpMs;
    nowUs += jumpMs * 1000;
    await wave((id) => limiter.limit(id), ids, ids);
    const second = heapUsed() - baseline;
    report = { contender, ids, heapPerMillionIds: perMillion(first), heapPerMillionIdsAfterSecondWave: perMillion(second), seconds: 0 };
  } else if (contender === 'rrl-memory') {
    const limiter = new InMemoryRateLimiter(MEMORY_RULES);
    const baseline = heapUsed();
    await wave((id) => limiter.limit(id), 0, ids);
    report = { contender, ids, heapPerMillionIds: perMillion(heapUsed() - baseline), seconds: 0 };
  } else if (contender === 'rlf-memory') {
    const limiter = new RateLimiterMemory({ points: MEMORY_RULES.maxInInterval, duration: MEMORY_RULES.interval / 1000 });
    const baseline = heapUsed();
    await wave((id) => limiter.consume(id).then(() => false), 0, ids);
    report = { contender, ids, heapPerMillionIds: perMillion(heapUsed() - baseline), seconds: 0 };
  } else {
    throw new TypeError(`unknown contender ${String(contender)}`);
  }
  process.stdout.write(`${JSON.stringify({ ...report, seconds: (performance.now() - started) / 1000 })}\n`);
  // rolling-rate-limiter keeps one live timer per id: leave without waiting for them.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
