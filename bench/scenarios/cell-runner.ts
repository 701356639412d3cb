// How a throughput cell is driven: Redis contenders in this process (they
// share the bench's connections), in-memory contenders each in a child
// process of its own (bench/memory-worker.ts), so their heaps do not mix.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Instance } from '../contenders/types.js';
import { measure, type Slice } from '../measure.js';
import type { WorkerReply, WorkerRequest } from '../memory-worker.js';
import type { ThroughputScenario } from '../workloads.js';

export interface CellRunner {
  /** Runs decisions for `ms`, unrecorded. */
  warm(ms: number): Promise<void>;
  /** Runs one measured slice of `ms`. */
  slice(ms: number): Promise<Slice>;
  close(): void;
}

/** A contender built in this process. */
export function inProcessRunner(instance: Instance, scenario: ThroughputScenario): CellRunner {
  const cursor = { next: 0 };
  const run = (ms: number): Promise<Slice> => measure(instance.decide, scenario.ids, scenario.concurrency, ms, cursor);
  return {
    warm: async (ms) => void (await run(ms)),
    slice: run,
    close: () => instance.dispose?.(),
  };
}

const WORKER = fileURLToPath(new URL('../memory-worker.ts', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

/** An in-memory contender in a child process of its own; resolves once the child is ready. */
export async function childRunner(contenderId: string, scenario: ThroughputScenario): Promise<CellRunner> {
  const child: ChildProcess = fork(WORKER, [contenderId, scenario.id], {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let waiting: ((reply: WorkerReply) => void) | undefined;
  let exited: Error | undefined;
  child.on('message', (reply: WorkerReply) => {
    const resolve = waiting;
    waiting = undefined;
    resolve?.(reply);
  });
  child.on('exit', (code, signal) => {
    exited = new Error(`memory worker for ${contenderId} exited (${code ?? signal})`);
    waiting?.({ error: exited.message });
  });
  const next = (): Promise<WorkerReply> =>
    new Promise((resolve) => {
      if (exited !== undefined) return resolve({ error: exited.message });
      waiting = resolve;
    });
  const request = async (message: WorkerRequest): Promise<Slice> => {
    const reply = next();
    child.send(message);
    const answer = await reply;
    if ('error' in answer) throw new Error(answer.error);
    return answer.slice;
  };

  const timer = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS);
  const ready = await next();
  clearTimeout(timer);
  if (!('error' in ready) || ready.error !== 'ready') {
    child.kill('SIGKILL');
    throw new Error(`memory worker for ${contenderId} did not start: ${'error' in ready ? ready.error : 'unexpected reply'}`);
  }
  return {
    warm: async (ms) => void (await request({ op: 'warm', ms })),
    slice: (ms) => request({ op: 'slice', ms }),
    close: () => {
      if (exited === undefined) child.send({ op: 'close' } satisfies WorkerRequest);
    },
  };
}
