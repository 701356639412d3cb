// Runs the whole behavioural contract against one Redis client library on a
// real server (a standalone redis-server or a three-master cluster, started
// by the harness, or REDIS_URL / REDIS_CLUSTER_URLS; valkey-server for a backend
// with `server: 'valkey'`, or VALKEY_URL / VALKEY_CLUSTER_URLS): the single-limiter
// contract with its model test, the stack contract with its model test, and
// concurrent connections hammering one id. Every supported client and
// topology passes the very same suite.

import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useRedisCluster, useValkeyCluster } from '../support/redis-cluster.js';
import { keyOf, RECORDS_FROM } from '../support/redis-keys.js';
import { useRedis, useValkey } from '../support/redis-server.js';
import { describeCostContract } from './cost-contract.js';
import { describeLimiterContract, type LimiterFactory } from './limiter-contract.js';
import { describeStackContract } from './stack-contract.js';
import { describeActionIdContract } from './action-ids-contract.js';

/** Where a client connects: one server's URL, or a cluster's seed nodes. */
export interface RedisTarget {
  /** A node's `redis://` URL (for a cluster: the first seed). */
  readonly url: string;
  readonly urls: readonly string[];
  readonly rootNodes: readonly { readonly host: string; readonly port: number }[];
}

/** A connected client and how to close it. */
export interface ConnectedClient {
  readonly client: RedisClient;
  close(): Promise<void>;
}

/** One client library on one topology, and how to connect it. */
export interface RedisBackend {
  /** As it appears in test titles, e.g. `node-redis 5 (cluster)`. */
  readonly name: string;
  readonly topology: 'standalone' | 'cluster';
  /** The server the harness starts: Redis (default; REDIS_URL, REDIS_CLUSTER_URLS) or Valkey (VALKEY_URL, VALKEY_CLUSTER_URLS). */
  readonly server?: 'redis' | 'valkey';
  connect(target: RedisTarget): Promise<ConnectedClient>;
}

/** How much randomized testing to do on this backend. */
export interface BackendVolume {
  readonly modelSchedules: number;
  readonly stackSchedules: number;
  /** When set, the contract and the concurrency test run again with `batch: true`, with this many model schedules. */
  readonly batchSchedules?: number;
}

async function startTarget({ topology, server: kind }: RedisBackend): Promise<RedisTarget & { stop(): Promise<void> }> {
  if (topology === 'cluster') {
    const cluster = kind === 'valkey' ? await useValkeyCluster() : await useRedisCluster();
    return { url: cluster.urls[0] as string, urls: cluster.urls, rootNodes: cluster.rootNodes, stop: () => cluster.stop() };
  }
  const server = kind === 'valkey' ? await useValkey() : await useRedis();
  const { hostname, port } = new URL(server.url);
  return { url: server.url, urls: [server.url], rootNodes: [{ host: hostname, port: Number(port) }], stop: () => server.stop() };
}

/** Describes the contract, the stack contract and the concurrency test on `backend`. */
export function describeRedisBackend(backend: RedisBackend, volume: BackendVolume): void {
  describe(`real Redis through ${backend.name}`, () => {
    let target: Awaited<ReturnType<typeof startTarget>> | undefined;
    let connected: ConnectedClient | undefined;
    // An ioredis client of the test's own, to look at what the limiters stored (the cost contract counts records).
    let inspector: Redis | Cluster | undefined;
    before(async function () {
      this.timeout(60_000);
      target = await startTarget(backend);
      connected = await backend.connect(target);
    });
    after(async () => {
      await inspector?.quit();
      await connected?.close();
      await target?.stop();
    });
    const memberCount = async (namespace: string, id: string): Promise<number> => {
      if (target === undefined) throw new Error('not connected');
      inspector ??= backend.topology === 'cluster' ? new Cluster(target.rootNodes.map((node) => ({ ...node }))) : new Redis(target.url);
      return inspector.zcount(keyOf(namespace, id), RECORDS_FROM, '+inf');
    };

    const client = (): RedisClient => {
      if (connected === undefined) throw new Error('not connected');
      return connected.client;
    };
    const namespaces = uniqueNamespaces('contract');
    const factory = (): LimiterFactory => (options) => new RollingRateLimiter({ ...options, client: client(), namespace: namespaces.next(options.namespace) });

    describeLimiterContract(backend.name, factory, { countBlockedFalse: true, actionIds: true, modelSchedules: volume.modelSchedules, multiPath: true });
    describeStackContract(backend.name, factory, {
      modelSchedules: volume.stackSchedules,
      foreignLimiter: (options) => new RollingRateLimiter(options),
    });
    describeActionIdContract(backend.name, factory);
    describeCostContract(backend.name, factory, { multiPath: true, memberCount });
    describeConcurrency(backend, () => target as RedisTarget, namespaces, false);
    if (volume.batchSchedules !== undefined) {
      const batched = (): LimiterFactory => (options) =>
        new RollingRateLimiter({ ...options, client: client(), namespace: namespaces.next(options.namespace), batch: true });
      const name = `${backend.name}, batch: true`;
      describeLimiterContract(name, batched, { countBlockedFalse: true, actionIds: true, modelSchedules: volume.batchSchedules, batch: true });
      describeStackContract(name, batched, {
        modelSchedules: Math.ceil(volume.batchSchedules / 2),
        foreignLimiter: (options) => new RollingRateLimiter(options),
        batch: true,
      });
      describeActionIdContract(name, batched);
      describeCostContract(name, batched, { batch: true, memberCount });
      describeConcurrency(backend, () => target as RedisTarget, namespaces, true);
    }
  });
}

/** Several connections of this client hammer one id at once: exactly the limit gets through. */
function describeConcurrency(backend: RedisBackend, target: () => RedisTarget, namespaces: { next(suffix?: string): string }, batch: boolean): void {
  describe(`concurrent connections${batch ? ', batch: true' : ''}`, () => {
    const connections: ConnectedClient[] = [];
    before(async () => {
      for (let i = 0; i < 4; i += 1) connections.push(await backend.connect(target()));
    });
    after(async () => {
      await Promise.all(connections.map((connection) => connection.close()));
    });

    const hammer = async (limit: (connection: number) => Promise<boolean>): Promise<number> => {
      const attempts = Array.from({ length: 240 }, (_, i) => limit(i % connections.length));
      return (await Promise.all(attempts)).filter((blocked) => !blocked).length;
    };

    for (const countBlocked of [true, false]) {
      it(`admit exactly maxInInterval (countBlocked: ${String(countBlocked)}), in every one of 5 rounds`, async () => {
        for (let round = 0; round < 5; round += 1) {
          const namespace = namespaces.next('hammer');
          const limiters = connections.map(
            (connection) => new RollingRateLimiter({ client: connection.client, namespace, interval: 600_000, maxInInterval: 17, countBlocked, batch }),
          );
          expect(await hammer((i) => (limiters[i] as RollingRateLimiter).limit(`id-${round}`)), `round ${round}`).to.equal(17);
        }
      });
    }

    it('admit exactly the smaller tier’s maximum through a stack, in every one of 5 rounds', async () => {
      for (let round = 0; round < 5; round += 1) {
        const small = namespaces.next('small');
        const large = namespaces.next('large');
        const stacks = connections.map(
          (connection) =>
            new RateLimiterStack(
              [
                new RollingRateLimiter({ client: connection.client, namespace: large, interval: 600_000, maxInInterval: 40, countBlocked: false }),
                new RollingRateLimiter({ client: connection.client, namespace: small, interval: 600_000, maxInInterval: 13, countBlocked: false }),
              ],
              { batch },
            ),
        );
        expect(await hammer((i) => (stacks[i] as RateLimiterStack).limit(`id-${round}`)), `round ${round}`).to.equal(13);
        const largeTier = (await (stacks[0] as RateLimiterStack).limiters[0]?.wouldLimitWithInfo(`id-${round}`))?.actionsRemaining;
        // A dry run counts the attempt it describes: 40 - 13 admitted - 1.
        expect(largeTier, 'the large tier recorded only the admitted attempts').to.equal(40 - 13 - 1);
      }
    });
  });
}
