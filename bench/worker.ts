// A child process holding one contender, so that no two contenders share a
// heap, a garbage collector or a JIT (rolling-rate-limiter's 100,000 live
// timers must not slow another contender's slices down):
//
//   fork('bench/worker.ts', [contenderId, redisUrl]) with --import tsx --expose-gc
//
// It holds any number of cells (the contender built on one scenario and a
// fresh namespace) and answers requests one at a time with `{ seq, value }`
// or `{ seq, error }`; it says `{ seq: 0 }` once ready, and exits when the
// parent disconnects.

import { closeClients, contender, openClients, type Instance } from './contenders.js';
import { measure, percentile, RULES, SCENARIOS, type Latencies, type Scenario } from './measure.js';

export type Op =
  | { readonly op: 'open'; readonly cell: number; readonly scenario: string; readonly namespace: string }
  | { readonly op: 'warm' | 'slice'; readonly cell: number; readonly ms: number }
  | { readonly op: 'close'; readonly cell: number }
  | { readonly op: 'heap'; readonly ids: number };
type Request = Op & { readonly seq: number };
export type Reply = { readonly seq: number; readonly value?: unknown } | { readonly seq: number; readonly error: string };

interface Cell {
  readonly instance: Instance;
  readonly scenario: Scenario;
  readonly cursor: { next: number };
  readonly latencies?: Latencies;
}

const send = (reply: Reply): void => void process.send?.(reply);
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Heap used per million ids after one allowed decision for each of `ids` new ids; for this library also after a
 * second wave of new ids once the first have left the window: the in-memory store forgets idle ids by the wall
 * clock, as Redis expires a key, so Date.now() is moved past the interval. (The peers forget by real-time timers.)
 */
async function heap(instance: Instance, family: string, ids: number): Promise<{ first: number; second?: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the heap measurement needs node --expose-gc');
  const used = (): number => (gc(), gc(), process.memoryUsage().heapUsed);
  const wave = async (from: number): Promise<void> => {
    for (let i = from; i < from + ids; i += 1) if (await instance.decide(`user${i}`)) throw new Error(`user${i} was blocked on its first action`);
  };
  const perMillion = (bytes: number): number => (bytes * 1_000_000) / ids;
  const baseline = used();
  await wave(0);
  const first = perMillion(used() - baseline);
  if (family !== 'library') return { first };
  const wallClock = Date.now.bind(Date);
  Date.now = () => wallClock() + RULES.memory.interval + 1_000;
  await wave(ids);
  return { first, second: perMillion(used() - baseline) };
}

async function main(): Promise<void> {
  const [id, url] = process.argv.slice(2) as [string, string];
  const chosen = contender(id);
  const clients = await openClients(url);
  const cells = new Map<number, Cell>();
  const cellOf = (cell: number): Cell => {
    const open = cells.get(cell);
    if (open === undefined) throw new Error(`cell ${cell} is not open`);
    return open;
  };

  const answer = async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'open': {
        const scenario = SCENARIOS.find((s) => s.id === request.scenario)!;
        const instance = await chosen.create(scenario.rules, request.namespace, clients);
        const latencies = { values: new Float64Array(1 << 21), count: 0 };
        cells.set(request.cell, { instance, scenario, cursor: { next: 0 }, latencies });
        return undefined;
      }
      case 'warm':
      case 'slice': {
        // No collection is forced before a slice: the child's garbage is its contender's own.
        const { instance, scenario, cursor, latencies } = cellOf(request.cell);
        const slice = await measure(instance.decide, scenario.ids, scenario.concurrency, request.ms, cursor, request.op === 'slice' ? latencies : undefined);
        return request.op === 'slice' ? slice : undefined;
      }
      case 'close': {
        const { instance, latencies } = cellOf(request.cell);
        instance.dispose?.();
        cells.delete(request.cell);
        if (latencies === undefined || latencies.count === 0) return {};
        const sorted = latencies.values.subarray(0, latencies.count).sort();
        return { p50Us: percentile(sorted, 50), p99Us: percentile(sorted, 99) };
      }
      case 'heap':
        return heap(await chosen.create(RULES.memory, 'heap', clients), chosen.family, request.ids);
    }
  };

  let queue = Promise.resolve();
  process.on('message', (request: Request) => {
    queue = queue.then(() =>
      answer(request).then(
        (value) => send({ seq: request.seq, value }),
        (error: unknown) => send({ seq: request.seq, error: message(error) }),
      ),
    );
  });
  process.on('disconnect', () => {
    for (const { instance } of cells.values()) instance.dispose?.();
    closeClients(clients);
    process.exit(0);
  });
  send({ seq: 0 });
}

main().catch((error: unknown) => {
  send({ seq: 0, error: message(error) });
  process.exit(1);
});
