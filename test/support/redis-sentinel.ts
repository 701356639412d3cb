// Starts a Redis Sentinel deployment for tests on 127.0.0.1: a primary, one
// replica of it, and three sentinels (`redis-server <config> --sentinel`, the
// mode every redis-server binary has) watching the primary under the name
// `mymaster` with a quorum of 2. Every process is started through
// startRedisServer, so it is stopped by PID and killed by its exit hook like
// every other test server. It resolves once the replica is in sync and every
// sentinel knows the replica and the two other sentinels, which is what a
// failover needs.

import { writeFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** The name the sentinels know the primary by. */
export const SENTINEL_MASTER_NAME = 'mymaster';

/** A running Sentinel deployment. */
export interface RedisSentinelHandle {
  /** The primary and the replica as started (after a failover, their roles are swapped). */
  readonly servers: readonly RedisServer[];
  /** The three sentinels. */
  readonly sentinels: readonly RedisServer[];
  /** Where clients find the sentinels. */
  readonly sentinelNodes: readonly { readonly host: string; readonly port: number }[];
  /** The primary's `host:port` as the sentinels report it now. */
  primary(): Promise<string>;
  /** `SENTINEL FAILOVER mymaster`; resolves once the sentinels report the other server as primary. */
  failover(): Promise<{ from: string; to: string; ms: number }>;
  /** Stops every process started here by PID and removes their files; safe to call twice. */
  stop(): Promise<void>;
}

const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;
const READY_TIMEOUT_MS = 15_000;
const POLL_MS = 50;

async function ask<T>(node: { host: string; port: number }, ...args: (string | number)[]): Promise<T> {
  const redis = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 2_000 });
  redis.on('error', () => {}); // reported by the command's rejection
  try {
    await redis.connect();
    return (await redis.call(String(args[0]), ...args.slice(1))) as T;
  } finally {
    redis.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  let last: unknown;
  for (let waited = 0; waited < READY_TIMEOUT_MS; waited += POLL_MS) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await delay(POLL_MS);
  }
  throw new Error(`${what}: not within ${READY_TIMEOUT_MS} ms${last === undefined ? '' : ` (${last instanceof Error ? last.message : JSON.stringify(last)})`}`);
}

/** Starts a primary, a replica and three sentinels; throws (never skips) when one does not start or the set-up is not ready in 15 s. */
export async function startRedisSentinel(): Promise<RedisSentinelHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'rwl-redis-sentinel-'));
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  const started: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    const results = await Promise.allSettled(started.map((server) => server.stop()));
    await rm(dir, { recursive: true, force: true });
    process.off('exit', removeDir);
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) throw failure.reason;
  };
  try {
    const primary = await startRedisServer();
    started.push(primary);
    const replica = await startRedisServer({ extraArgs: ['--replicaof', primary.host, String(primary.port)] });
    started.push(replica);
    await until('the replica in sync', async () => (await ask<unknown[]>(replica, 'ROLE'))[3] === 'connected');

    const sentinels: RedisServer[] = [];
    for (let i = 0; i < 3; i++) {
      const file = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        file,
        [
          `sentinel monitor ${SENTINEL_MASTER_NAME} ${primary.host} ${primary.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
          `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = await startRedisServer({ configFile: file, extraArgs: ['--dir', dir, '--sentinel'] });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    for (const sentinel of sentinels) {
      await until(`sentinel ${sentinel.port} knowing the replica and the other sentinels`, async () => {
        const replicas = await ask<unknown[]>(sentinel, 'SENTINEL', 'REPLICAS', SENTINEL_MASTER_NAME);
        const others = await ask<unknown[]>(sentinel, 'SENTINEL', 'SENTINELS', SENTINEL_MASTER_NAME);
        return replicas.length === 1 && others.length === 2;
      });
    }

    const primaryNow = async (): Promise<string> => {
      const [host, port] = await ask<[string, string]>(sentinels[0] as RedisServer, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME);
      return `${host}:${port}`;
    };
    return {
      servers: [primary, replica],
      sentinels,
      sentinelNodes: sentinels.map((sentinel) => ({ host: sentinel.host, port: sentinel.port })),
      primary: primaryNow,
      failover: async () => {
        const from = await primaryNow();
        const startedAt = performance.now();
        // Refused (NOGOODSLAVE, INPROG) until the replica of a previous failover is in sync and the sentinels agree.
        await until('SENTINEL FAILOVER accepted', async () => (await ask(sentinels[0] as RedisServer, 'SENTINEL', 'FAILOVER', SENTINEL_MASTER_NAME)) === 'OK');
        let to = from;
        await until('the failover', async () => {
          to = await primaryNow();
          if (to === from) return false;
          const [host, port] = to.split(':') as [string, string];
          return (await ask<unknown[]>({ host, port: Number(port) }, 'ROLE'))[0] === 'master';
        });
        return { from, to, ms: performance.now() - startedAt };
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}
