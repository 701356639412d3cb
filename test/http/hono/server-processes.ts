// What both two-process Hono tests (Node: two-processes.test.ts; Bun:
// test/runtimes/bun.test.ts) share: the rules their server processes run,
// the schedule they replay, and how a test starts those processes, sets their
// limiter clocks, reads what the store admitted, and stops them.

import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Child } from '../../support/child-process.js';
import { RECORDS_FROM } from '../../support/redis-keys.js';

/** The servers' rule: 3 per 4 s. */
export const WINDOW_MS = 4_000;
export const LIMIT = 3;
/** Longest a server process may live. */
export const CHILD_LIMIT_MS = 90_000;
/** The origin of the servers' clocks, in µs: the test sets each step's time after it. */
export const T0 = Date.UTC(2026, 0, 1) * 1000;

// The schedule both tests replay, as [ms after T0, which process (0 or 1), expected status]. The first admission
// leaves the window at exactly 4 s, the next two at 6 s.
export const THREE_PER_FOUR_SECONDS: readonly (readonly [atMs: number, process: 0 | 1, status: number])[] = [
  [0, 0, 200],
  [2_000, 1, 200],
  [2_000, 0, 200],
  [3_999.999, 1, 429], // 1 µs before the first leaves
  [4_000, 0, 200],
  [4_000, 1, 429], // a fixed window would have started afresh at 4 s and let this through
  [6_000, 1, 200],
  [6_000, 0, 200],
  [6_000, 1, 429],
];

/** One server process and what its first line said (its ports, and whatever else it reports). */
export interface ServerProcess<Ports> {
  readonly name: string;
  readonly child: Child;
  readonly ports: Ports;
}

/** Waits for `child`'s first line, the JSON of its ports; a server that says anything else did not start. */
export async function startServer<Ports>(name: string, child: Child): Promise<ServerProcess<Ports>> {
  const line = await child.nextLine();
  if (!line.startsWith('{')) {
    child.closeInput();
    throw new Error(`server ${name} did not start: ${line}\n${(await child.exited).stderr}`);
  }
  return { name, child, ports: JSON.parse(line) as Ports };
}

/** Starts every server together; throws the first failure, once those that started are known (to stop them). */
export async function startServers<Ports>(starting: readonly Promise<ServerProcess<Ports>>[], into: ServerProcess<Ports>[]): Promise<void> {
  const started = await Promise.allSettled(starting);
  into.push(...started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** Sets every process's limiter clock to `atMs` after T0, and waits until each has. */
export async function setClock(servers: readonly ServerProcess<unknown>[], atMs: number): Promise<void> {
  await Promise.all(
    servers.map(async ({ name, child }) => {
      child.send(`now ${T0 + Math.round(atMs * 1000)}`);
      const answer = await child.nextLine();
      if (answer !== 'ok') throw new Error(`server ${name} answered ${JSON.stringify(answer)} to the clock`);
    }),
  );
}

/** Closes every server's input, which stops it, and checks that none had to be killed. */
export async function stopServers(servers: readonly ServerProcess<unknown>[]): Promise<void> {
  for (const { child } of servers) child.closeInput();
  const runs = await Promise.all(servers.map(({ child }) => child.exited));
  for (const run of runs) expect(run.killed, run.stderr).to.equal(false);
}

/** The admission times (ms after T0) the store holds under `key`, read from Redis. */
export async function admissionsUnder(reader: Redis | undefined, key: string): Promise<number[]> {
  if (reader === undefined) throw new Error('no Redis');
  const flat = await reader.zrangebyscore(key, RECORDS_FROM, '+inf', 'WITHSCORES');
  return flat.filter((_, i) => i % 2 === 1).map((score) => (Number(score) - T0) / 1000);
}
