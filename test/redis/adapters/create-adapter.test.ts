// One adapter per client: whatever uses a client (limiters, stacks, the hit
// log) gets the same adapter, and so shares what lives on it: one error
// monitor, one batcher, one stall watchdog on a node-redis Cluster.

import { errorMonitor } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis5';
import redisMock from 'redis-mock';
import sinon from 'sinon';
import { RollingRateLimiter, type RedisClient } from '../../../src/index.js';
import { adapterFor } from '../../../src/redis/adapters/create-adapter.js';
import { batcherFor } from '../../../src/redis/script-store.js';
import { createHitLog } from '../../../src/http/stores/hit-log/create-hit-log.js';
import { commandsDuring } from '../../support/command-stats.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { uniqueNamespaces } from '../../support/namespaces.js';

const rules = { interval: 60_000, maxInInterval: 10 };

/**
 * A node-redis cluster client whose scripts never answer until `answerAll`,
 * whose slots alternate between two masters (so that a stalled call's key has
 * another master to ask), and which logs each `EXISTS` it is sent.
 */
function stallingCluster(): { client: RedisClient; probes: string[]; answerAll: () => void } {
  const probes: string[] = [];
  const waiting: ((reply: unknown) => void)[] = [];
  const node = { sendCommand: () => new Promise(() => undefined) };
  const client = {
    isOpen: true,
    masters: [],
    multi: () => ({ addCommand: () => undefined, exec: () => new Promise(() => undefined) }),
    sendCommand: (_routing: string | undefined, _readonly: boolean | undefined, args: string[]) => {
      if (args[0] === 'EXISTS') return (probes.push(args[1] as string), Promise.resolve(0));
      return new Promise((resolve) => waiting.push(resolve));
    },
    slots: Array.from({ length: 16384 }, (_, slot) => ({ master: { address: slot % 2 === 0 ? 'a:1' : 'b:2' } })),
    nodeByAddress: new Map([
      ['a:1', {}],
      ['b:2', {}],
    ]),
    nodeClient: () => node,
  };
  return { client, probes, answerAll: () => waiting.forEach((answer) => answer(null)) };
}

describe('adapterFor: one adapter per client', () => {
  // A sandbox of this file's own: the default sandbox may still hold another file's fake timers.
  const sandbox = sinon.createSandbox();
  afterEach(() => sandbox.restore());

  it('gives the same adapter for the same client, and its own to each client, of every kind', async () => {
    const ioredis = new Redis({ lazyConnect: true });
    const mock = redisMock.createClient();
    try {
      const clients: Record<string, object> = {
        ioredis,
        'node-redis': createClient5(),
        'node-redis cluster': createCluster5({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }),
        'node-redis sentinel': createSentinel5({ name: 'mymaster', sentinelRootNodes: [] }),
        'redis-mock (node_redis v3 callback API)': mock,
      };
      const adapters = Object.entries(clients).map(([kind, client]) => {
        const adapter = adapterFor(client);
        expect(adapter.kind).to.equal(kind);
        expect(adapterFor(client), kind).to.equal(adapter);
        return adapter;
      });
      expect(new Set(adapters)).to.have.property('size', adapters.length);
      expect(adapterFor(createClient5()), 'another client, another adapter').not.to.equal(adapterFor(clients['node-redis'] as object));
    } finally {
      ioredis.disconnect();
      mock.quit();
    }
  });

  it('makes one batcher per client, shared by every batched store on it', () => {
    const adapter = adapterFor(createClient5());
    const batcher = batcherFor(adapter);
    expect(batcherFor(adapterFor(adapter.client)), 'the same for the same client').to.equal(batcher);
    expect(batcherFor(adapterFor(createClient5())), 'another for another client').not.to.equal(batcher);
  });

  it('watches a client’s errors once, however many limiters and hit logs use it', () => {
    const client = createClient5();
    for (let i = 0; i < 3; i++) new RollingRateLimiter({ ...rules, client, namespace: `watched-${i}` });
    createHitLog(client);
    expect(client.listenerCount(errorMonitor)).to.equal(1);
  });

  it('runs one stall watchdog per node-redis Cluster client, however many limiters use it', async () => {
    const clock = sandbox.useFakeTimers({ toFake: ['performance', 'setInterval', 'clearInterval'] });
    const { client, probes, answerAll } = stallingCluster();
    const limiters = Array.from(
      { length: 3 },
      (_, i) => new RollingRateLimiter({ ...rules, client, namespace: `stall-${i}`, timeout: 60_000, circuitBreaker: false }),
    );
    const calls = limiters.map((limiter, i) => limiter.limit(`user-${i}`));
    clock.tick(1_001);
    calls.push(...limiters.map((limiter, i) => limiter.limit(`user-${i}`)));
    await Promise.resolve();
    expect(clock.countTimers(), 'watchdogs').to.equal(1);
    expect(probes, 'slot map checks at the first stall').to.have.length(1);
    clock.tick(300);
    expect(probes, 'one check per 300 ms for the client, not one per limiter').to.have.length(2);
    answerAll();
    await Promise.allSettled(calls);
    clock.tick(300);
    expect(clock.countTimers(), 'the watchdog stopped once no call stalls').to.equal(0);
  });

  describe('on a real Redis', () => {
    const connection = useIORedisClient();
    const namespaces = uniqueNamespaces('shared-adapter');

    /** Four calls on each of two `batch: true` limiters on `client`, in one turn, interleaved; the EVALSHA calls Redis served meanwhile. */
    async function scriptCallsOfTwoLimiters(client: RedisClient): Promise<number> {
      const [first, second] = [0, 1].map(() => new RollingRateLimiter({ ...rules, client, namespace: namespaces.next(), batch: true }));
      await Promise.all([first, second].map((limiter) => limiter!.limit('warm-up'))); // the script loaded, whatever ran before
      const counts = await commandsDuring(connection.client, async () => {
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? first : second)!.limit(`user-${i >> 1}`)));
        expect(answers).to.deep.equal(Array<boolean>(8).fill(false));
      });
      return counts.evalsha;
    }

    it('decides two batch: true limiters on one ioredis client in one batcher: two script calls of four (one batcher each would make four)', async () => {
      const client = new Redis(connection.url);
      try {
        expect(await scriptCallsOfTwoLimiters(client)).to.equal(2);
      } finally {
        await client.quit();
      }
    });

    it('decides two batch: true limiters on one node-redis client in one batcher: two script calls of four', async () => {
      const client = createClient5({ url: connection.url });
      await client.connect();
      try {
        expect(await scriptCallsOfTwoLimiters(client)).to.equal(2);
      } finally {
        client.destroy();
      }
    });
  });
});
