// How a throughput cell is driven: every contender in a child process of its
// own (../cell-worker.ts), so that no two share a heap, a garbage collector or
// a JIT. A Redis contender keeps one child for the whole bench run, warmed up
// once, as a service that runs one configuration would; its cells (one per
// scenario and run) open and close in it. An in-memory contender gets a fresh
// child per cell, so that each measurement starts on a heap of its own.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerReply, WorkerRequest } from '../cell-worker.js';
import type { Contender } from '../contenders/types.js';
import type { Slice } from '../measure.js';
import type { ThroughputScenario } from '../workloads.js';

/** One contender on one scenario, open in its child process. */
export interface CellRunner {
  /** Runs decisions for `ms`, unrecorded. */
  warm(ms: number): Promise<void>;
  /** Runs one measured slice of `ms`. */
  slice(ms: number): Promise<Slice>;
  close(): Promise<void>;
}

const WORKER = fileURLToPath(new URL('../cell-worker.ts', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

/** Each kind of request without its `seq`, which the sender adds. */
type WithoutSeq<R> = R extends unknown ? Omit<R, 'seq'> : never;
type Request = WithoutSeq<WorkerRequest>;

/** A child process holding one contender. */
class ContenderProcess {
  private readonly pending = new Map<number, (reply: WorkerReply) => void>();
  private seq = 0;
  private cells = 0;
  private exited: string | undefined;

  private constructor(
    readonly contenderId: string,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (reply: WorkerReply) => {
      const resolve = this.pending.get(reply.seq);
      this.pending.delete(reply.seq);
      resolve?.(reply);
    });
    child.on('exit', (code, signal) => {
      this.exited = `the child process of ${contenderId} exited (${code ?? signal})`;
      for (const [seq, resolve] of this.pending) resolve({ seq, error: this.exited });
      this.pending.clear();
    });
  }

  /** Starts the child; resolves once its contender is built and its connections (if any) are open. */
  static async start(contenderId: string, redisUrl: string | undefined): Promise<ContenderProcess> {
    const child = fork(WORKER, redisUrl === undefined ? [contenderId] : [contenderId, redisUrl], {
      execArgv: ['--import', 'tsx'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const handle = new ContenderProcess(contenderId, child);
    const timer = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS);
    const ready = await handle.reply(0);
    clearTimeout(timer);
    if ('error' in ready) {
      handle.stop();
      throw new Error(`the child process of ${contenderId} did not start: ${ready.error}`);
    }
    return handle;
  }

  private reply(seq: number): Promise<WorkerReply> {
    return new Promise((resolve) => {
      if (this.exited !== undefined) resolve({ seq, error: this.exited });
      else this.pending.set(seq, resolve);
    });
  }

  private async request(request: Request): Promise<Slice | undefined> {
    this.seq += 1;
    const answer = this.reply(this.seq);
    if (this.exited === undefined) this.child.send({ ...request, seq: this.seq });
    const reply = await answer;
    if ('error' in reply) throw new Error(reply.error);
    return reply.slice;
  }

  /** Builds the contender on `scenario` and a fresh `namespace`, in the child. */
  async open(scenario: ThroughputScenario, namespace: string): Promise<CellRunner> {
    this.cells += 1;
    const cell = this.cells;
    await this.request({ op: 'open', cell, scenarioId: scenario.id, namespace });
    return {
      warm: async (ms) => void (await this.request({ op: 'warm', cell, ms })),
      slice: async (ms) => {
        const slice = await this.request({ op: 'slice', cell, ms });
        if (slice === undefined) throw new Error(`${this.contenderId} answered a slice with nothing`);
        return slice;
      },
      close: async () => void (await this.request({ op: 'close', cell })),
    };
  }

  /** Ends the child: it exits when the IPC channel closes. */
  stop(): void {
    if (this.exited === undefined && this.child.connected) this.child.disconnect();
  }
}

/** The child processes of one bench run, started on first use. */
export class ContenderProcesses {
  private readonly shared = new Map<string, Promise<ContenderProcess>>();

  /** @param redisUrl The server the Redis contenders' children connect to. */
  constructor(private readonly redisUrl: string) {}

  /** Opens `contender` on `scenario` in its child (a child of its own for an in-memory cell). */
  async open(contender: Contender, scenario: ThroughputScenario, namespace: string): Promise<CellRunner> {
    if (scenario.kind === 'memory') {
      const child = await ContenderProcess.start(contender.id, undefined);
      try {
        const runner = await child.open(scenario, namespace);
        return { ...runner, close: async () => child.stop() };
      } catch (error) {
        child.stop();
        throw error;
      }
    }
    let child = this.shared.get(contender.id);
    if (child === undefined) {
      child = ContenderProcess.start(contender.id, this.redisUrl);
      this.shared.set(contender.id, child);
    }
    return (await child).open(scenario, namespace);
  }

  /** Stops every shared child. */
  async stopAll(): Promise<void> {
    const children = await Promise.allSettled(this.shared.values());
    this.shared.clear();
    for (const child of children) if (child.status === 'fulfilled') child.value.stop();
  }
}
