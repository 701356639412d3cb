// What `batch: true` saves over HTTP: @upstash/redis against the
// Upstash-REST-compatible test endpoint (test/support/upstash-rest-endpoint.ts)
// in front of a redis-server of the bench's own (loopback, a free port, no
// persistence, stopped by its PID). N decisions from C concurrent callers, each
// caller deciding its share one after another, unbatched and with
// `batch: true`, with the client's automatic pipelining off and on (its
// default); counted at the endpoint: HTTP requests and the commands sent on to
// Redis (a batch is one command, a pipeline of n is n). Latency per decision is
// the caller's wait for its answer. The endpoint runs in a child process (this
// file with `--serve`), so that its work takes no CPU from the callers'; `--delay`
// holds each answer that many ms, as a network round trip to a database
// elsewhere would.
//
//   node --import tsx bench/upstash-http.ts [--decisions 1000] [--callers 50] [--delay 0,20] [--runs 3]

import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from '@upstash/redis';
import { RollingRateLimiter } from '../src/index.js';
import { startUpstashRestEndpoint, type UpstashRestEndpointStats } from '../test/support/upstash-rest-endpoint.js';
import { median, percentile } from './measure.js';
import { startRedisServer } from './support/redis-server.js';

const { values: flags } = parseArgs({
  options: {
    decisions: { type: 'string', default: '1000' },
    callers: { type: 'string', default: '50' },
    delay: { type: 'string', default: '0,20' },
    runs: { type: 'string', default: '3' },
    serve: { type: 'string' },
  },
});
const DECISIONS = Number(flags.decisions);
const CALLERS = Number(flags.callers);
const DELAYS = flags.delay.split(',').map(Number);
const RUNS = Number(flags.runs);
if (![DECISIONS, CALLERS, RUNS, ...DELAYS].every((n) => Number.isInteger(n) && n >= 0) || CALLERS < 1 || DECISIONS < CALLERS || RUNS < 1) {
  throw new Error('--decisions, --callers (at most the decisions), --runs and --delay take whole numbers');
}

/** One way to decide: batched or not, the client's automatic pipelining on or off. */
interface Mode {
  readonly name: string;
  readonly batch: boolean;
  readonly enableAutoPipelining: boolean;
}

const MODES: readonly Mode[] = [
  { name: 'unbatched, auto-pipelining off', batch: false, enableAutoPipelining: false },
  { name: 'unbatched, auto-pipelining on (default)', batch: false, enableAutoPipelining: true },
  { name: 'batch: true, auto-pipelining off', batch: true, enableAutoPipelining: false },
  { name: 'batch: true, auto-pipelining on (default)', batch: true, enableAutoPipelining: true },
];

/** One run's figures. */
interface Run {
  readonly requests: number;
  readonly commands: number;
  readonly wallMs: number;
  readonly latencies: Float64Array;
}

/** The endpoint in a child process, as the bench sees it. */
interface ChildEndpoint {
  readonly url: string;
  readonly token: string;
  /** The endpoint's counts since the last call, which resets them. */
  takeStats(): Promise<UpstashRestEndpointStats>;
  close(): Promise<void>;
}

/** The child's side (`--serve <redis url>`): starts the endpoint, answers `stats` messages, exits on `close` or when the parent goes. */
async function serve(redisUrl: string, delayMs: number): Promise<void> {
  const endpoint = await startUpstashRestEndpoint({ redisUrl, delayMs });
  process.on('message', (message: string) => {
    if (message === 'stats') {
      process.send?.({ stats: { ...endpoint.stats, byPath: { ...endpoint.stats.byPath } } });
      endpoint.resetStats();
    } else if (message === 'close') void endpoint.close().then(() => process.exit(0));
  });
  process.on('disconnect', () => void endpoint.close().then(() => process.exit(0)));
  process.send?.({ url: endpoint.url, token: endpoint.token });
}

async function startChildEndpoint(redisUrl: string, delayMs: number): Promise<ChildEndpoint> {
  const child: ChildProcess = fork(import.meta.filename, ['--serve', redisUrl, '--delay', String(delayMs)], { execArgv: ['--import', 'tsx'] });
  const [{ url, token }] = (await once(child, 'message')) as [{ url: string; token: string }];
  return {
    url,
    token,
    async takeStats() {
      const answer = once(child, 'message') as Promise<[{ stats: UpstashRestEndpointStats }]>;
      child.send('stats');
      return (await answer)[0].stats;
    },
    async close() {
      const exited = once(child, 'exit');
      child.send('close');
      await exited;
    },
  };
}

let namespaceCounter = 0;

async function runOnce(endpoint: ChildEndpoint, mode: Mode): Promise<Run> {
  const client = new Redis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false, enableAutoPipelining: mode.enableAutoPipelining });
  const limiter = new RollingRateLimiter({
    client,
    namespace: `bench-upstash-${process.pid}-${(namespaceCounter += 1)}`,
    interval: 60_000,
    maxInInterval: 10,
    batch: mode.batch,
  });
  await limiter.limit('warm-up'); // the script loaded: NOSCRIPT, then EVAL, once
  await endpoint.takeStats();
  const latencies = new Float64Array(DECISIONS);
  let next = 0;
  const caller = async (index: number): Promise<void> => {
    for (let i = index; i < DECISIONS; i += CALLERS) {
      const at = next;
      next += 1;
      const start = performance.now();
      await limiter.limit(`user-${index}-${i % 20}`);
      latencies[at] = performance.now() - start;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CALLERS }, (_, index) => caller(index)));
  const wallMs = performance.now() - start;
  const stats = await endpoint.takeStats();
  return { requests: stats.requests, commands: stats.commands, wallMs, latencies: latencies.sort() };
}

const format = (value: number, digits = 2): string => value.toFixed(digits);

async function main(): Promise<void> {
  const server = await startRedisServer();
  const lines = [
    `${DECISIONS} decisions from ${CALLERS} concurrent callers, median of ${RUNS} runs; @upstash/redis through the test endpoint on 127.0.0.1 (a child process)`,
    '',
    '| round trip added | mode | HTTP requests | decisions per request | commands to Redis | latency per decision, mean / p50 / p99 (ms) | decisions/s |',
    '| --- | --- | ---: | ---: | ---: | --- | ---: |',
  ];
  try {
    for (const delayMs of DELAYS) {
      const endpoint = await startChildEndpoint(server.url, delayMs);
      try {
        for (const mode of MODES) {
          const runs: Run[] = [];
          for (let run = 0; run < RUNS; run += 1) runs.push(await runOnce(endpoint, mode));
          const requests = median(runs.map((r) => r.requests));
          const commands = median(runs.map((r) => r.commands));
          const mean = median(runs.map((r) => r.latencies.reduce((a, b) => a + b, 0) / DECISIONS));
          const p50 = median(runs.map((r) => percentile(r.latencies, 50)));
          const p99 = median(runs.map((r) => percentile(r.latencies, 99)));
          const rate = median(runs.map((r) => (DECISIONS / r.wallMs) * 1000));
          lines.push(
            `| ${delayMs} ms | ${mode.name} | ${requests} | ${format(DECISIONS / requests, 1)} | ${commands} | ${format(mean)} / ${format(p50)} / ${format(p99)} | ${format(rate, 0)} |`,
          );
          console.error(lines[lines.length - 1]);
        }
      } finally {
        await endpoint.close();
      }
    }
  } finally {
    await server.stop();
  }
  console.log(lines.join('\n'));
}

if (flags.serve === undefined) await main();
else await serve(flags.serve, DELAYS[0] ?? 0);
