// Child process that holds one in-memory contender for the throughput
// measurement, so that each in-memory limiter has a heap (and garbage
// collector) of its own: rolling-rate-limiter's 100,000 live timers or its
// growing arrays must not slow the other contenders' slices down.
//
//   fork('bench/memory-worker.ts', [contenderId, scenarioId]) with --import tsx
//
// Answers IPC requests one at a time: { op: 'warm' | 'slice', ms } with
// { slice } (or { error }), and { op: 'close' } by exiting. Exits when the
// parent goes away.

import { memoryWindowFloor, noopFloor } from './contenders/floors.js';
import { libraryMemoryContender } from './contenders/library.js';
import { peerMemoryContenders } from './contenders/peers.js';
import type { Instance } from './contenders/types.js';
import { measure } from './measure.js';
import { THROUGHPUT_SCENARIOS } from './workloads.js';

export type WorkerRequest = { readonly op: 'warm' | 'slice'; readonly ms: number } | { readonly op: 'close' };
export type WorkerReply = { readonly slice: import('./measure.js').Slice } | { readonly error: string };

const MEMORY_CONTENDERS = [libraryMemoryContender, ...peerMemoryContenders, noopFloor, memoryWindowFloor];

function send(reply: WorkerReply): void {
  process.send?.(reply);
}

async function main(): Promise<void> {
  const [contenderId, scenarioId] = process.argv.slice(2);
  const contender = MEMORY_CONTENDERS.find((c) => c.id === contenderId);
  const scenario = THROUGHPUT_SCENARIOS.find((s) => s.id === scenarioId);
  if (contender === undefined || scenario === undefined) throw new TypeError(`unknown contender or scenario: ${contenderId} ${scenarioId}`);
  const instance: Instance = await contender.create(scenario.rules, `worker-${process.pid}`);
  const cursor = { next: 0 };
  let queue = Promise.resolve();
  process.on('disconnect', () => process.exit(0));
  process.on('message', (request: WorkerRequest) => {
    queue = queue.then(async () => {
      if (request.op === 'close') {
        instance.dispose?.();
        process.exit(0);
      }
      try {
        send({ slice: await measure(instance.decide, scenario.ids, scenario.concurrency, request.ms, cursor) });
      } catch (error) {
        send({ error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
  send({ error: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
