// `npm run bench`: this library side by side with rolling-rate-limiter,
// rate-limiter-flexible and the floors, on a redis-server of its own
// (127.0.0.1, a free port, no persistence) that it stops at the end, on error
// and on Ctrl-C. Writes bench/results/latest.{md,svg,json}.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { closeClients, CONTENDERS, openClients } from './contenders.js';
import { measureFootprint, measureHeap } from './footprint.js';
import { measureRedisTime, measureWaitTime } from './redis-cost.js';
import { SCENARIOS } from './measure.js';
import { describeMachine, RESULTS_DIR, writeReport, type BenchResults } from './report.js';
import { measuringOrder } from './targets.js';
import { Children, runThroughput, type Cell, type ThroughputRecord } from './throughput.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { pin, PINNING } from './support/cpu-pinning.js';

const USAGE = `npm run bench -- [--quick] [--runs N] [--only TEXT] [--duration MS] [--rebuild]

  --quick        short measurements, for a smoke run
  --runs N       repeat the throughput measurements N times (default 1)
  --only TEXT    only contenders and measurements whose name contains TEXT
                 (contender ids, scenario ids, or bytes, keys, heap, redis-time,
                 cost-wait)
  --duration MS  one throughput measurement, in ms (default 2000)
  --rebuild      rewrite latest.md and latest.svg from latest.json, measuring nothing`;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    only: { type: 'string' },
    duration: { type: 'string' },
    rebuild: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const runs = Number(flags.runs);
const durationMs = Number(flags.duration ?? (flags.quick ? 400 : 2000));
if (flags.help || !(Number.isSafeInteger(runs) && runs > 0 && Number.isSafeInteger(durationMs) && durationMs > 0)) {
  console.log(USAGE);
  process.exit(flags.help ? 0 : 2);
}
const only = flags.only?.toLowerCase();
const selected = (...names: string[]): boolean => only === undefined || names.some((name) => name.toLowerCase().includes(only));
const log = (line: string): void => console.log(line);

async function bench(server: RedisServer): Promise<void> {
  const admin = new Redis(server.url);
  const clients = await openClients(server.url);
  const children = new Children(server.url);
  try {
    const startedAt = new Date().toISOString();
    const machine = describeMachine(/redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown');
    machine.forEach(log);
    log(`redis-server pid ${server.pid} on ${server.url}\n`);
    const tag = randomBytes(3).toString('hex');
    let counter = 0;
    const namespace = (): string => `bench-${tag}-${(counter += 1)}`;

    // Contenders that a target compares are measured back to back in every round, so that load falls on both alike.
    const order = measuringOrder();
    const rank = (id: string): number => (order.includes(id) ? order.indexOf(id) : order.length);
    const ordered = [...CONTENDERS].sort((a, b) => rank(a.id) - rank(b.id));
    const cells: Cell[] = SCENARIOS.flatMap((scenario) =>
      ordered
        .filter((c) => (c.backend === 'memory') === (scenario.kind === 'memory') && selected(scenario.id, c.id))
        .map((contender) => ({ scenario, contender })),
    );
    // One group per store kind and concurrency: many ids and hot id interleaved.
    const groupOf = ({ scenario }: Cell): string => `${scenario.kind}-${scenario.concurrency}`;
    const groups = [...new Set(cells.map(groupOf))].map((key) => cells.filter((cell) => groupOf(cell) === key));
    const context = { admin, children, durationMs, warmupMs: flags.quick ? 100 : 300, namespace, log };
    const throughput: ThroughputRecord[] = [];
    if (groups.length > 0) log('Warming every contender up once (not recorded)');
    await runThroughput(context, groups, 0, 0);
    for (let run = 0; run < runs; run += 1) {
      log(`Throughput, run ${run + 1} of ${runs}`);
      throughput.push(...(await runThroughput(context, groups, run, flags.quick ? 2 : 16)));
    }

    const pick = (measurement: string, ids: string[]): string[] => ids.filter((id) => selected(measurement, id));
    const onRedis = ['lib-multi@ioredis', 'lib-script@ioredis', 'rrl@ioredis'];
    log('\nBytes per decision and memory per key');
    const footprint = await measureFootprint(
      { admin, clients, namespace, log },
      { bytes: pick('bytes', onRedis), keys: pick('keys', onRedis) },
      flags.quick ? 200 : 800,
    );
    log('\nHeap per million ids');
    Object.assign(footprint, await measureHeap(server.url, pick('heap', ['lib-memory', 'rrl-memory', 'rlf-memory']), flags.quick ? 100_000 : 1_000_000, log));
    if (selected('redis-time')) {
      log('\nRedis time per decision: the decide script and the sliding-log floor on calls encoded beforehand, a redis-server each');
      Object.assign(footprint, await measureRedisTime(flags.quick ? 1 : 3, log));
    }
    if (selected('cost-wait')) {
      log("\nCost tiers: a blocked attempt's walk, W(S) with records kept for calls in flight, a key at its budget; one key per case, a redis-server each");
      Object.assign(footprint, await measureWaitTime(flags.quick ? 1 : 3, log));
    }

    const measured = new Set([...throughput.map((r) => r.contender), ...Object.keys(footprint).map((key) => key.split(' ')[0])]);
    const results: BenchResults = {
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      runs,
      durationMs,
      warmupMs: context.warmupMs,
      machine,
      contenders: ordered.filter((c) => measured.has(c.id)).map(({ id, label, family, backend }) => ({ id, label, family, backend })),
      throughput,
      footprint,
    };
    await writeReport(results);
    log(`\nWrote ${RESULTS_DIR}latest.{md,svg,json}`);
  } finally {
    await children.stopAll();
    closeClients(clients);
    admin.disconnect();
  }
}

async function main(): Promise<number> {
  if (flags.rebuild) {
    await writeReport(JSON.parse(await readFile(`${RESULTS_DIR}latest.json`, 'utf8')) as BenchResults);
    return 0;
  }
  const server = await startRedisServer();
  pin(server.pid, PINNING?.server);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping redis-server (pid ${server.pid})`);
      void server.stop().finally(() => process.exit(130));
    });
  }
  try {
    await bench(server);
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  } finally {
    await server.stop();
  }
}

// Exit explicitly: rolling-rate-limiter's in-memory limiter may leave live timers behind.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
