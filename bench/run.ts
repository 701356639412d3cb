// `npm run bench`: the side-by-side benchmark. Starts one redis-server of its
// own (127.0.0.1, free port, no persistence), runs every selected scenario
// against every contender, prints the tables, writes bench/results/latest.*,
// and stops the server at the end, on error and on Ctrl-C. Throughput is
// measured with each contender in a child process of its own
// (scenarios/cell-runner.ts); this process only orders the slices and reads
// the server's statistics around them.
//
// Flags: --quick, --runs N, --only TEXT, --duration MS (see bench/cli.ts).

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { parseArgs, selected, USAGE, type BenchOptions } from './cli.js';
import { closeClients, MEMORY_CONTENDERS, openClients, redisContenders } from './contenders/registry.js';
import type { Contender } from './contenders/types.js';
import { describeMachine, machineLines } from './machine.js';
import { redisVersion } from './redis-stats.js';
import { writeResults } from './report/write.js';
import type { BenchResults } from './results.js';
import { ContenderProcesses } from './scenarios/cell-runner.js';
import { measureHeap, type HeapRecord } from './scenarios/heap.js';
import { measureBytes, measureKeyMemory, type BytesRecord, type KeyMemoryRecord } from './scenarios/redis-footprint.js';
import { runThroughput, type Cell, type ThroughputRecord } from './scenarios/throughput.js';
import { computeTargets } from './targets.js';
import { BYTES_MAXIMA, THROUGHPUT_SCENARIOS } from './workloads.js';

const BYTES_CONTENDERS = [
  'lib-multi@ioredis',
  'lib-script@ioredis',
  'lib-script-cb@ioredis',
  'lib-multi@node-redis5',
  'lib-script@node-redis5',
  'lib-script-cb@node-redis5',
  'rrl@ioredis',
];
const KEY_MEMORY_CONTENDERS = ['lib-multi@ioredis', 'lib-script@ioredis', 'lib-script-cb@ioredis', 'rrl@ioredis'];
// The floors (floor-noop, floor-memory-window) have no heap measurement: bench/memory-heap.ts knows only these.
const HEAP_CONTENDERS = ['lib-memory', 'rrl-memory', 'rlf-memory'];

const log = (line: string): void => console.log(line);

/**
 * Contenders that a target compares are measured back to back in every round (their slices an eighth of a second
 * apart rather than several seconds), so that the machine's load falls on both alike: each floor right after the
 * library path it bounds, the floor's twin right after the floor, rolling-rate-limiter right before the default
 * path it is compared with, and the useScript option right after the MULTI path's floor. The rest keep their order,
 * after these.
 */
const MEASURED_IN_PAIRS = [
  'rrl@ioredis',
  'lib-multi@ioredis',
  'floor-multi@ioredis',
  'lib-script-cb@ioredis',
  'lib-script@ioredis',
  'floor-lua@ioredis',
  'control-floor-lua@ioredis',
  'lib-stack3@ioredis',
  'floor-lua-stack3@ioredis',
  'lib-multi@node-redis5',
  'floor-multi@node-redis5',
  'lib-script-cb@node-redis5',
  'lib-script@node-redis5',
  'floor-lua@node-redis5',
  'lib-stack3@node-redis5',
  'floor-lua-stack3@node-redis5',
];

function inMeasuringOrder(contenders: readonly Contender[]): Contender[] {
  const rank = (contender: Contender): number => {
    const at = MEASURED_IN_PAIRS.indexOf(contender.id);
    return at === -1 ? MEASURED_IN_PAIRS.length : at;
  };
  return [...contenders].sort((a, b) => rank(a) - rank(b));
}

/** The contenders a once-only measurement runs: all of them when its name is selected, else those selected by name. */
function pick(options: BenchOptions, measurement: string, all: readonly Contender[], ids: readonly string[]): Contender[] {
  const chosen = all.filter((c) => ids.includes(c.id));
  return selected(options, measurement) ? chosen : chosen.filter((c) => options.only !== undefined && selected(options, c.id, c.label));
}

async function bench(options: BenchOptions, server: RedisServer): Promise<void> {
  const admin = new Redis(server.url);
  // The bytes and memory-per-key measurements build their contenders here; throughput runs each in a child.
  const clients = await openClients(server.url);
  const processes = new ContenderProcesses(server.url);
  try {
    const startedAt = new Date().toISOString();
    const machine = describeMachine(await redisVersion(admin));
    machineLines(machine).forEach((line) => log(line));
    log(`redis-server pid ${server.pid} on ${server.url}; ${options.runs} run(s), ${options.durationMs} ms per measurement${options.only === undefined ? '' : `, only "${options.only}"`}\n`);

    const onRedis = redisContenders(clients);
    const all = [...onRedis, ...MEMORY_CONTENDERS];
    const tag = randomBytes(3).toString('hex');
    let counter = 0;
    // No ':' in namespaces: the library escapes it, and keyOf() builds keys with the namespace as given.
    const namespace = (): string => `bench-${tag}-${(counter += 1)}`;
    const context = { options, admin, processes, namespace, log };

    const cells: Cell[] = THROUGHPUT_SCENARIOS.flatMap((scenario) =>
      (scenario.kind === 'memory' ? MEMORY_CONTENDERS : inMeasuringOrder(onRedis))
        .filter((contender) => selected(options, scenario.id, contender.id, contender.label))
        .map((contender) => ({ scenario, contender })),
    );
    const scenarios = THROUGHPUT_SCENARIOS.filter((scenario) => cells.some((cell) => cell.scenario === scenario));
    // One group per (store kind, concurrency): many ids and hot id interleaved.
    const groupKeys = [...new Set(cells.map(({ scenario }) => `${scenario.kind}-c${scenario.concurrency}`))];
    const groups = groupKeys.map((key) => cells.filter(({ scenario }) => `${scenario.kind}-c${scenario.concurrency}` === key));
    const throughput: ThroughputRecord[] = [];
    if (groups.length > 0) {
      log('Warming up every contender once (not recorded)');
      await runThroughput(context, groups, 0, 0);
    }
    for (let run = 0; run < options.runs; run += 1) {
      log(`Throughput, run ${run + 1} of ${options.runs}`);
      throughput.push(...(await runThroughput(context, groups, run, options.slices)));
    }

    const bytesContenders = pick(options, 'bytes', all, BYTES_CONTENDERS);
    const keyContenders = pick(options, 'key-memory', all, KEY_MEMORY_CONTENDERS);
    const heapContenders = pick(options, 'heap', all, HEAP_CONTENDERS).map((c) => c.id);
    if (bytesContenders.length > 0) log('\nBytes per decision');
    const bytes: BytesRecord[] = await measureBytes(context, bytesContenders, BYTES_MAXIMA);
    if (keyContenders.length > 0) log('\nMemory per key');
    const keyMemory: KeyMemoryRecord[] = await measureKeyMemory(context, keyContenders);
    if (heapContenders.length > 0) log(`\nHeap per ${options.heapIds.toLocaleString('en-US')} ids (child processes)`);
    const heap: HeapRecord[] = await measureHeap(heapContenders, options.heapIds, log);

    const measuredIds = new Set([...throughput, ...bytes, ...keyMemory, ...heap].map((record) => record.contender));
    const results: BenchResults = {
      startedAt,
      finishedAt: new Date().toISOString(),
      options,
      machine,
      contenders: all.filter((c) => measuredIds.has(c.id)).map(({ id, label, family, backend }) => ({ id, label, family, backend })),
      scenarios: scenarios.map(({ id, label }) => ({ id, label })),
      throughput,
      bytes,
      keyMemory,
      heap,
    };
    const files = await writeResults(results, computeTargets(results));
    log(`\nWrote ${files.join(', ')}`);
  } finally {
    await processes.stopAll();
    closeClients(clients);
    admin.disconnect();
  }
}

async function main(): Promise<number> {
  let options: BenchOptions | 'help';
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 2;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  const server = await startRedisServer();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= server.stop());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping redis-server (pid ${server.pid})`);
      void stop().finally(() => process.exit(130));
    });
  }
  try {
    await bench(options, server);
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  } finally {
    await stop();
  }
}

// Exit explicitly: rolling-rate-limiter's InMemoryRateLimiter may leave live timers behind.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
