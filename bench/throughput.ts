// Throughput: decisions per second, p50 / p99 latency (one and 64 calls in flight),
// client CPU and the Redis server's cost per decision.
//
// Each contender runs in a child process of its own (worker.ts). A Redis
// contender keeps one child for the whole bench run, warmed up once, as a
// service that runs one configuration would; an in-memory contender gets a
// fresh child per cell, so that each measurement starts on a heap of its own.
//
// The cells of one concurrency form a group. Each measurement is cut into
// slices taken round-robin over every cell of the group, every other round in
// reverse, so that load from elsewhere on the machine falls on all of them
// alike; a ratio then pairs slice k of one cell with slice k of another
// (targets.ts). Around each slice of a Redis cell the server's counters are
// reset and read on a separate admin connection.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type { Contender } from './contenders.js';
import { pin, PINNING } from './support/cpu-pinning.js';
import type { Scenario, Slice } from './measure.js';
import type { Op, Reply } from './worker.js';

const WORKER = fileURLToPath(new URL('worker.ts', import.meta.url));

/** A contender's child process. */
export class Child {
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private seq = 0;
  private exited: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly id: string,
  ) {
    child.on('message', (reply: Reply) => {
      this.pending.get(reply.seq)?.(reply);
      this.pending.delete(reply.seq);
    });
    child.on('exit', (code, signal) => {
      this.exited = `the child process of ${id} exited (${code ?? signal})`;
      for (const [seq, resolve] of this.pending) resolve({ seq, error: this.exited });
    });
  }

  /** Resolves once the child has built its contender's connections. */
  static async start(id: string, redisUrl: string): Promise<Child> {
    const execArgv = ['--import', 'tsx', '--expose-gc', '--max-old-space-size=4096'];
    const forked = fork(WORKER, [id, redisUrl], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    pin(forked.pid, PINNING?.clients);
    const child = new Child(forked, id);
    await child.reply(0);
    return child;
  }

  private reply(seq: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.exited !== undefined) reject(new Error(this.exited));
      this.pending.set(seq, (reply) => ('error' in reply ? reject(new Error(`${this.id}: ${reply.error}`)) : resolve(reply.value)));
    });
  }

  request(op: Op): Promise<unknown> {
    this.seq += 1;
    const answer = this.reply(this.seq);
    if (this.exited === undefined) this.child.send({ ...op, seq: this.seq });
    return answer;
  }

  /** The child exits when its IPC channel closes. */
  stop(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/** A contender on a scenario, open in its child. */
interface Runner {
  readonly run: (op: 'warm' | 'slice', ms: number) => Promise<unknown>;
  /** Closes the cell; resolves with its latency percentiles. */
  readonly close: () => Promise<{ p50Us?: number; p99Us?: number }>;
}

/** The children of one bench run. */
export class Children {
  private readonly shared = new Map<string, Promise<Child>>();
  private cells = 0;

  constructor(readonly redisUrl: string) {}

  async open(contender: Contender, scenario: Scenario, namespace: string): Promise<Runner> {
    const own = scenario.kind === 'memory';
    let started = own ? undefined : this.shared.get(contender.id);
    if (started === undefined) {
      started = Child.start(contender.id, this.redisUrl);
      if (!own) this.shared.set(contender.id, started);
    }
    const child = await started;
    const cell = (this.cells += 1);
    await child.request({ op: 'open', cell, scenario: scenario.id, namespace });
    return {
      run: (op, ms) => child.request({ op, cell, ms }),
      close: async () => {
        const percentiles = (await child.request({ op: 'close', cell })) as { p50Us?: number; p99Us?: number };
        if (own) child.stop();
        return percentiles;
      },
    };
  }

  async stopAll(): Promise<void> {
    for (const child of await Promise.allSettled(this.shared.values())) if (child.status === 'fulfilled') child.value.stop();
  }
}

/** The Redis server's cost of a slice, summed; per decision in a record. */
export interface ServerCost {
  /** INFO commandstats usec of the commands clients sent (MULTI + EXEC, EVALSHA): nested commands not counted twice. */
  readonly cmdUs: number;
  /** redis-server user + system CPU, network I/O included. */
  readonly cpuUs: number;
  /** Commands executed, nested ones included. */
  readonly commands: number;
  readonly bytesOut: number;
  readonly bytesIn: number;
}

const CONTAINERS = new Set(['multi', 'exec', 'eval', 'evalsha', 'eval_ro', 'evalsha_ro']);
const ADMIN = /^(config|info|flushdb|memory|script|client|hello|select|command)/;

async function info(admin: Redis): Promise<Map<string, string>> {
  const lines = (await admin.info('stats', 'cpu', 'commandstats')).split('\r\n');
  return new Map(lines.filter((line) => line.includes(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]));
}

/** Resets the server's counters; the function returned reads what was spent since. */
async function serverWindow(admin: Redis): Promise<() => Promise<ServerCost>> {
  await admin.config('RESETSTAT');
  const before = await info(admin);
  return async () => {
    const after = await info(admin);
    const delta = (field: string): number => Number(after.get(field)) - Number(before.get(field));
    let commands = 0;
    let usec = 0;
    let containerUsec: number | undefined;
    for (const [name, value] of after) {
      if (!name.startsWith('cmdstat_') || ADMIN.test(name.slice(8))) continue;
      const [calls, spent] = [/calls=(\d+)/, /usec=(\d+)/].map((pattern) => Number(pattern.exec(value)?.[1])) as [number, number];
      commands += calls;
      usec += spent;
      if (CONTAINERS.has(name.slice(8))) containerUsec = (containerUsec ?? 0) + spent;
    }
    const cpuUs = (delta('used_cpu_user') + delta('used_cpu_sys')) * 1e6;
    return { cmdUs: containerUsec ?? usec, cpuUs, commands, bytesOut: delta('total_net_output_bytes'), bytesIn: delta('total_net_input_bytes') };
  };
}

export interface ThroughputRecord {
  readonly run: number;
  readonly scenario: string;
  readonly contender: string;
  readonly perSecond?: number;
  /** Decisions per second of each slice, in round order: slice k of every cell of a group is from round k. */
  readonly slices?: readonly number[];
  readonly p50Us?: number;
  readonly p99Us?: number;
  /** Client CPU per decision, µs (the contender's child process). */
  readonly clientCpuUs?: number;
  /** Redis's cost per decision. */
  readonly server?: ServerCost;
  readonly error?: string;
}

export interface ThroughputContext {
  readonly admin: Redis;
  readonly children: Children;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly namespace: () => string;
  readonly log: (line: string) => void;
}

export interface Cell {
  readonly scenario: Scenario;
  readonly contender: Contender;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function sum<K extends string>(items: readonly Record<K, number>[], keys: readonly K[], divisor: number): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, items.reduce((total, item) => total + item[key], 0) / divisor])) as Record<K, number>;
}

/** A group of cells, once: open and warm each, then `slices` rounds; with 0 slices, only the warm-up (for the JIT). */
async function runGroup(context: ThroughputContext, cells: readonly Cell[], run: number, slices: number): Promise<ThroughputRecord[]> {
  const entries = cells.map((cell) => ({
    ...cell,
    runner: undefined as Runner | undefined,
    slices: [] as Slice[],
    costs: [] as ServerCost[],
    error: undefined as string | undefined,
  }));
  const percentiles = new Map<(typeof entries)[number], { p50Us?: number; p99Us?: number }>();
  try {
    for (const entry of entries) {
      try {
        entry.runner = await context.children.open(entry.contender, entry.scenario, context.namespace());
        await entry.runner.run('warm', context.warmupMs);
      } catch (error) {
        entry.error = message(error);
      }
    }
    for (let round = 0; round < slices; round += 1) {
      for (const entry of round % 2 === 1 ? [...entries].reverse() : entries) {
        if (entry.runner === undefined || entry.error !== undefined) continue;
        try {
          const read = entry.scenario.kind === 'redis' ? await serverWindow(context.admin) : undefined;
          entry.slices.push((await entry.runner.run('slice', context.durationMs / slices)) as Slice);
          if (read !== undefined) entry.costs.push(await read());
        } catch (error) {
          entry.error = message(error);
        }
      }
    }
  } finally {
    for (const entry of entries) if (entry.runner !== undefined) percentiles.set(entry, await entry.runner.close().catch(() => ({})));
    await context.admin.flushdb();
  }
  return entries.map((entry): ThroughputRecord => {
    const base = { run, scenario: entry.scenario.id, contender: entry.contender.id };
    if (entry.error !== undefined) return { ...base, error: entry.error };
    const total = sum(entry.slices, ['decisions', 'elapsedMs', 'cpuUs'], 1);
    return {
      ...base,
      perSecond: (total.decisions * 1000) / total.elapsedMs,
      slices: entry.slices.map((slice) => (slice.decisions * 1000) / slice.elapsedMs),
      ...percentiles.get(entry),
      clientCpuUs: total.cpuUs / total.decisions,
      ...(entry.costs.length === 0 ? {} : { server: sum(entry.costs, ['cmdUs', 'cpuUs', 'commands', 'bytesOut', 'bytesIn'], total.decisions) }),
    };
  });
}

/** Every group once; the order of its cells rotates with the run and reverses every other run, to spread drift. */
export async function runThroughput(
  context: ThroughputContext,
  groups: readonly (readonly Cell[])[],
  run: number,
  slices: number,
): Promise<ThroughputRecord[]> {
  const records: ThroughputRecord[] = [];
  for (const cells of groups) {
    const ordered = run % 2 === 1 ? [...cells].reverse() : [...cells];
    const shift = (run * 7) % Math.max(1, ordered.length);
    if (slices === 0) {
      await runGroup(context, ordered, run, 0);
      continue;
    }
    for (const record of await runGroup(context, [...ordered.slice(shift), ...ordered.slice(0, shift)], run, slices)) {
      records.push(record);
      const shown = record.error ?? `${Math.round(record.perSecond!).toLocaleString('en-US')}/s`;
      context.log(`  run ${run + 1} ${record.scenario.padEnd(12)} ${record.contender.padEnd(28)} ${shown}`);
    }
  }
  return records;
}
