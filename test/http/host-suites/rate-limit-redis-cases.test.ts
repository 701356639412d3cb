// What a user switching from rate-limit-redis (the Redis store most
// express-rate-limit users have) expects of RollingWindowStore on real Redis,
// with ioredis and with node-redis, in our own words: rate-limit-redis ships
// no tests in its package, so its cases are restated here, not copied.
//
// Already covered elsewhere, and not repeated here:
//   - increment counts and answers resetTime, get reads without counting, on
//     every backend: test/http/stores/express-rate-limit-rules.test.ts
//     ("reads the count and when it next drops");
//   - decrement gives a hit back: express-rate-limit-rules.test.ts and
//     host-suites/express-rate-limit.test.ts (skipFailedRequests,
//     skipSuccessfulRequests, over HTTP), store-details.test.ts (node-redis);
//   - resetKey forgets a key: host-suites/express-rate-limit.test.ts, and
//     store-details.test.ts; resetAll: express-rate-limit-rules.test.ts;
//   - two rateLimit() instances on one ioredis client, with their own
//     prefixes, over HTTP: express-rate-limit-rules.test.ts ("prefixes").

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as delay } from 'node:timers/promises';
import { createClient } from 'redis5';
import { HitKeys } from '../../../src/http/stores/hit-log/create-hit-log.js';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import type { RedisClient } from '../../../src/redis/adapters/client-types.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const namespaces = uniqueNamespaces('rate-limit-redis-cases');

/** A client of one kind, not connected yet, and how to connect and close it. */
interface UnconnectedClient {
  readonly client: RedisClient;
  connect(): Promise<void>;
  close(): Promise<void>;
}

const clientKinds: Record<'ioredis' | 'node-redis', (url: string) => UnconnectedClient> = {
  ioredis: (url) => {
    const client = new Redis(url, { lazyConnect: true });
    return { client, connect: () => client.connect(), close: async () => void (await client.quit()) };
  },
  'node-redis': (url) => {
    const client = createClient({ url });
    client.on('error', () => undefined);
    return { client, connect: async () => void (await client.connect()), close: async () => void (await client.quit()) };
  },
};

for (const [kind, unconnected] of Object.entries(clientKinds)) {
  describe(`rate-limit-redis cases: RollingWindowStore on ${kind}`, function () {
    this.timeout(30_000);
    let redis: UsedRedis | undefined;
    let used: UnconnectedClient | undefined;
    /** Reads what the store wrote, through a client of its own. */
    let inspector: Redis | undefined;

    before(async () => {
      redis = await useRedis();
      used = unconnected(redis.url);
      await used.connect();
      inspector = new Redis(redis.url);
    });

    after(async () => {
      await used?.close();
      await inspector?.quit();
      await redis?.stop();
    });

    const started = <T>(value: T | undefined): T => {
      if (value === undefined) throw new Error('the redis-server of this describe block has not started yet');
      return value;
    };
    /** The keys Redis holds under a store's prefix. */
    const keysUnder = async (prefix: string): Promise<string[]> => {
      const pattern = `${new HitKeys(prefix).prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      return (await started(inspector).keys(pattern)).sort();
    };

    it('keeps two stores with different prefixes on one client apart, each under its own prefix in Redis', async () => {
      const [one, two] = [namespaces.next('one'), namespaces.next('two')];
      const first = new RollingWindowStore({ client: started(used).client, prefix: one });
      const second = new RollingWindowStore({ client: started(used).client, prefix: two });
      first.init({ windowMs: 60_000, limit: 5 });
      second.init({ windowMs: 60_000, limit: 5 });
      for (let i = 0; i < 3; i += 1) await first.increment('198.51.100.7');
      expect((await second.increment('198.51.100.7')).totalHits, 'the same client key, counted apart').to.equal(1);
      for (const prefix of [one, two]) {
        const held = await keysUnder(prefix);
        expect(held, `keys under ${prefix}`).to.include(new HitKeys(prefix).keyFor('198.51.100.7'));
        for (const key of held) expect(key.startsWith(new HitKeys(prefix).keyFor('198.51.100.7')), `${key}: the client key's`).to.equal(true);
      }
      await first.resetKey('198.51.100.7');
      expect((await second.get('198.51.100.7'))?.totalHits, 'resetKey on one store leaves the other').to.equal(1);
      await first.resetAll();
      expect(await keysUnder(one), 'resetAll forgets every key of its store').to.deep.equal([]);
      expect(await keysUnder(two), 'and leaves the other store').to.not.deep.equal([]);
      await Promise.all([first.shutdown(), second.shutdown()]);
    });

    it('gives each key a TTL of the window, so Redis forgets it once the window has passed', async () => {
      const prefix = namespaces.next('ttl');
      const store = new RollingWindowStore({ client: started(used).client, prefix });
      store.init({ windowMs: 60_000, limit: 5 });
      await store.increment('a');
      const keys = await keysUnder(prefix);
      expect(keys).to.include(new HitKeys(prefix).keyFor('a'));
      for (const key of keys) expect(await started(inspector).pttl(key), `${key}: a TTL, at most the window`).to.be.within(1, 60_000);

      const short = new RollingWindowStore({ client: started(used).client, prefix: namespaces.next('short') });
      short.init({ windowMs: 200, limit: 5 });
      await short.increment('b');
      await short.increment('b');
      expect(await keysUnder(short.prefix)).to.not.deep.equal([]);
      for (let i = 0; i < 50 && (await keysUnder(short.prefix)).length > 0; i += 1) await delay(20);
      expect(await keysUnder(short.prefix), 'gone within a second of a 200 ms window').to.deep.equal([]);
      expect(await short.get('b')).to.deep.equal({ totalHits: 0, resetTime: undefined });
      await Promise.all([store.shutdown(), short.shutdown()]);
    });

    it('works when created before its client connects', async () => {
      const late = unconnected(started(redis).url);
      try {
        const store = new RollingWindowStore({ client: late.client, prefix: namespaces.next('late') });
        store.init({ windowMs: 60_000, limit: 2 });
        await late.connect();
        expect((await store.increment('a')).totalHits).to.equal(1);
        expect((await store.increment('a')).totalHits).to.equal(2);
        expect((await store.get('a'))?.totalHits).to.equal(2);
        await store.shutdown();
      } finally {
        await late.close();
      }
    });
  });
}
