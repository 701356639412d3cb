// Child process that holds one contender for the throughput measurement, so
// that no two contenders share a heap, a garbage collector or a JIT:
// rolling-rate-limiter's 100,000 live timers, or the garbage of ioredis's
// MULTI, must not slow another contender's slices down.
//
//   fork('bench/cell-worker.ts', [contenderId, redisUrl?]) with --import tsx
//
// A Redis contender opens connections of its own to `redisUrl`. The child
// holds any number of cells (the contender built on one scenario and a fresh
// namespace) and answers requests one at a time, each with a reply carrying
// the request's `seq`: `open` a cell, `warm` it or take a `slice` of it, and
// `close` it. It first sends `{ seq: 0 }` once ready (or `{ seq: 0, error }`),
// and exits when the parent disconnects.

import { closeClients, MEMORY_CONTENDERS, openClients, redisContenders } from './contenders/registry.js';
import type { Clients, Contender, Instance } from './contenders/types.js';
import { measure, type Slice } from './measure.js';
import { THROUGHPUT_SCENARIOS, type ThroughputScenario } from './workloads.js';

export type WorkerRequest =
  | { readonly seq: number; readonly op: 'open'; readonly cell: number; readonly scenarioId: string; readonly namespace: string }
  | { readonly seq: number; readonly op: 'warm' | 'slice'; readonly cell: number; readonly ms: number }
  | { readonly seq: number; readonly op: 'close'; readonly cell: number };

export type WorkerReply = { readonly seq: number; readonly slice?: Slice } | { readonly seq: number; readonly error: string };

interface OpenCell {
  readonly instance: Instance;
  readonly scenario: ThroughputScenario;
  readonly cursor: { next: number };
}

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function main(): Promise<void> {
  const [contenderId, redisUrl] = process.argv.slice(2);
  const clients: Clients | undefined = redisUrl === undefined ? undefined : await openClients(redisUrl);
  const contenders: readonly Contender[] = clients === undefined ? MEMORY_CONTENDERS : redisContenders(clients);
  const contender = contenders.find((c) => c.id === contenderId);
  if (contender === undefined) throw new TypeError(`unknown contender: ${contenderId}`);
  const cells = new Map<number, OpenCell>();
  const cellOf = (cell: number): OpenCell => {
    const open = cells.get(cell);
    if (open === undefined) throw new Error(`cell ${cell} is not open`);
    return open;
  };

  const answer = async (request: WorkerRequest): Promise<Slice | undefined> => {
    switch (request.op) {
      case 'open': {
        const scenario = THROUGHPUT_SCENARIOS.find((s) => s.id === request.scenarioId);
        if (scenario === undefined) throw new TypeError(`unknown scenario: ${request.scenarioId}`);
        cells.set(request.cell, { instance: await contender.create(scenario.rules, request.namespace), scenario, cursor: { next: 0 } });
        return undefined;
      }
      case 'warm':
      case 'slice': {
        // No forced collection before a slice: the child's garbage is its contender's own. A full collection
        // eight times a second slowed every Redis contender (the bare Lua floor on ioredis from 43.7k to 29.2k
        // decisions/s) and the library's script path more than its floor (0.83x of it, against 1.01x without).
        const { instance, scenario, cursor } = cellOf(request.cell);
        const slice = await measure(instance.decide, scenario.ids, scenario.concurrency, request.ms, cursor);
        return request.op === 'slice' ? slice : undefined;
      }
      case 'close':
        cells.get(request.cell)?.instance.dispose?.();
        cells.delete(request.cell);
        return undefined;
    }
  };

  let queue = Promise.resolve();
  process.on('disconnect', () => {
    for (const { instance } of cells.values()) instance.dispose?.();
    if (clients !== undefined) closeClients(clients);
    process.exit(0);
  });
  process.on('message', (request: WorkerRequest) => {
    queue = queue.then(async () => {
      try {
        const slice = await answer(request);
        send(slice === undefined ? { seq: request.seq } : { seq: request.seq, slice });
      } catch (error) {
        send({ seq: request.seq, error: message(error) });
      }
    });
  });
  send({ seq: 0 });
}

main().catch((error: unknown) => {
  send({ seq: 0, error: message(error) });
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
