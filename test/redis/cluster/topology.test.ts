// Where the library's keys live on a real Redis Cluster (3 masters started by
// test/support/redis-cluster.ts, or REDIS_CLUSTER_URLS), shown with real
// commands:
//   - keySlot() computes the same slot as CLUSTER KEYSLOT, on awkward keys and
//     on the library's own keys;
//   - every key of one id lands on one slot whatever the namespace (a multi-key
//     MSET across namespaces succeeds; one across two ids gets CROSSSLOT);
//   - many ids spread over every master, and each key is where the slot map says;
//   - a limiter and a stack on an ioredis `Cluster` limit exactly, for ids on
//     every master.
// It prints how long the cluster took to start and how 1,000 ids spread.

import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { RateLimiterStack, RollingRateLimiter } from '../../../src/index.js';
import { escapeIdentifier, KeyBuilder } from '../../../src/core/identity.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { SeededRandom } from '../../support/random.js';
import { keySlot, masterOfSlot, slotOwners, useRedisCluster, type RedisClusterHandle, type SlotRange } from '../../support/redis-cluster.js';

/** Namespaces with every character the key format escapes or delimits by. */
const AWKWARD_NAMESPACES = ['limits', 'push:minute', 'a{b', 'c}d', '{tag}', '}{', 'x:{y}:z', '%7B', '{', '}', ':', 'ключ', '😀', ''];
const AWKWARD_IDS = ['1', '42', 'user:42', '{id}', '}{', '{', '}', '%', '%7D', 'é', '日本', '😀', '\uD800', 'a\uDC00b', ' ', 'a b\nc'];

describe('the library on a real Redis Cluster', function () {
  this.timeout(60_000);

  let cluster: RedisClusterHandle | undefined;
  let admin: Redis | undefined;
  let client: Cluster | undefined;
  let owners: SlotRange[] = [];
  const namespaces = uniqueNamespaces('cluster');

  before(async () => {
    const startedAt = performance.now();
    cluster = await useRedisCluster();
    const source = process.env.REDIS_CLUSTER_URLS ? 'REDIS_CLUSTER_URLS' : `${cluster.nodes.length} masters started here`;
    console.log(`      cluster ready in ${Math.round(performance.now() - startedAt)} ms (${source})`);
    admin = new Redis(cluster.urls[0] as string);
    client = new Cluster([...cluster.rootNodes]);
    owners = await slotOwners(cluster);
  });
  after(async () => {
    await client?.quit();
    await admin?.quit();
    await cluster?.stop();
  });

  const adminClient = (): Redis => {
    if (admin === undefined) throw new Error('not connected');
    return admin;
  };
  const clusterClient = (): Cluster => {
    if (client === undefined) throw new Error('not connected');
    return client;
  };
  const masters = (): string[] => [...new Set(owners.map((range) => `${range.master.host}:${range.master.port}`))];
  const serverSlot = async (key: string): Promise<number> => Number(await adminClient().call('CLUSTER', 'KEYSLOT', key));
  /** ioredis's connection to one master, by `host:port`. */
  const masterConnection = (address: string): Redis => {
    const node = clusterClient()
      .nodes('master')
      .find((candidate) => `${candidate.options.host}:${candidate.options.port}` === address);
    if (node === undefined) throw new Error(`the Cluster client has no connection to master ${address}`);
    return node;
  };
  /** One id per master: ids `probe-0`, `probe-1`, ... until every master has one. */
  const oneIdPerMaster = (): Map<string, string> => {
    const ids = new Map<string, string>();
    for (let i = 0; ids.size < masters().length && i < 10_000; i++) {
      const id = `probe-${i}`;
      const master = masterOfSlot(owners, keySlot(new KeyBuilder('any').keyFor(id)));
      if (!ids.has(master)) ids.set(master, id);
    }
    expect([...ids.keys()].sort()).to.deep.equal(masters().sort());
    return ids;
  };

  it('serves all 16384 slots from every master started, in contiguous ranges', () => {
    expect(owners[0]?.start).to.equal(0);
    expect(owners[owners.length - 1]?.end).to.equal(16383);
    owners.slice(1).forEach((range, i) => expect(range.start).to.equal((owners[i] as SlotRange).end + 1));
    if (!process.env.REDIS_CLUSTER_URLS) expect(masters()).to.have.length(3);
  });

  it('computes the same slot as CLUSTER KEYSLOT, for awkward keys and for the library’s own keys', async () => {
    expect(keySlot('123456789')).to.equal(0x31c3); // the CRC16/XMODEM check value
    const random = new SeededRandom(20_240_607);
    const alphabet = ['a', 'b', 'z', '0', '{', '}', '{', '}', ':', '%', ' ', '\n', '\u0000', 'é', 'ß', '日', '本', '😀', '🚀'];
    const keys = [
      '',
      'foo',
      '{}',
      '{}{a}',
      '{a}{b}',
      'a{b}c',
      '{{a}}',
      '}{a}',
      '{',
      '}',
      '}{',
      'foo{}bar',
      '{user1000}.following',
      '{user1000}.followers',
      'foo{bar}{zap}',
      'ключ',
      '日本語{東京}',
      '😀{😀}',
      '{é}',
      'a{é}b',
      '{ tag with spaces }x',
      '\n{x}\r',
    ];
    for (let i = 0; i < 250; i++) {
      const length = random.int(0, 20);
      keys.push(Array.from({ length }, () => random.pick(alphabet)).join(''));
    }
    for (const namespace of AWKWARD_NAMESPACES) {
      for (const id of AWKWARD_IDS) keys.push(new KeyBuilder(namespace).keyFor(id));
    }
    expect(keys.length).to.be.greaterThan(300);

    const fromServer = await Promise.all(keys.map(serverSlot));
    const mismatches = keys.filter((key, i) => keySlot(key) !== fromServer[i]);
    expect(mismatches, 'keys whose slot keySlot() gets wrong').to.deep.equal([]);
    expect(new Set(fromServer).size, 'the keys spread over many slots').to.be.greaterThan(100);
  });

  it('puts every key of one id on one slot, whatever the namespace', async () => {
    const redis = clusterClient();
    const slotsOf = async (id: string): Promise<number[]> =>
      Promise.all(AWKWARD_NAMESPACES.map((namespace) => serverSlot(new KeyBuilder(namespace).keyFor(id))));

    for (const id of AWKWARD_IDS) {
      const slots = await slotsOf(id);
      expect(new Set(slots), `slots of id ${JSON.stringify(id)}`).to.deep.equal(new Set([keySlot(escapeIdentifier(id))]));
    }

    // A multi-key command is accepted only when all its keys share a slot.
    const run = namespaces.next();
    const keysOf = (id: string): string[] => AWKWARD_NAMESPACES.map((namespace) => new KeyBuilder(`${run}${namespace}`).keyFor(id));
    const [idA, idB] = [...oneIdPerMaster().values()] as [string, string];
    const keysA = keysOf(idA);
    try {
      expect(await redis.mset(...keysA.flatMap((key) => [key, 'x']))).to.equal('OK');
      expect(await redis.exists(...keysA)).to.equal(keysA.length);
      const acrossIds = [keysA[0], keysOf(idB)[0]] as [string, string];
      let crossSlot: unknown;
      await redis.mset(acrossIds[0], 'y', acrossIds[1], 'y').catch((error: unknown) => (crossSlot = error));
      expect(String(crossSlot)).to.match(/CROSSSLOT/);
    } finally {
      await redis.del(...keysA);
    }
  });

  it('spreads 1,000 ids over every master, each key where the slot map says', async () => {
    const redis = clusterClient();
    const namespace = namespaces.next('spread');
    const keys = new KeyBuilder(namespace);
    const ids = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? String(i) : `user:${i}`));
    const expected = new Map<string, number>(masters().map((master) => [master, 0]));
    for (const id of ids) {
      const master = masterOfSlot(owners, keySlot(keys.keyFor(id)));
      expected.set(master, (expected.get(master) ?? 0) + 1);
    }
    console.log(`      1,000 ids over the masters: ${[...expected].map(([master, count]) => `${master} ${count}`).join(', ')}`);
    const fairShare = ids.length / expected.size;
    for (const [master, count] of expected) expect(count, `ids on ${master}`).to.be.at.least(0.6 * fairShare);

    try {
      await Promise.all(ids.map((id) => redis.set(keys.keyFor(id), '1', 'PX', 60_000)));
      for (const [master, count] of expected) {
        expect(await countKeys(masterConnection(master), `${escapeIdentifier(namespace)}:*`), `keys found on ${master}`).to.equal(count);
      }
    } finally {
      await Promise.all(ids.map((id) => redis.del(keys.keyFor(id))));
    }
  });

  for (const countBlocked of [true, false]) {
    it(`limits exactly on an ioredis Cluster for ids on every master (countBlocked: ${countBlocked})`, async () => {
      const namespace = namespaces.next(`limiter-${countBlocked}`);
      const limiter = new RollingRateLimiter({ client: clusterClient(), namespace, interval: 60_000, maxInInterval: 3, countBlocked });
      for (const [master, id] of oneIdPerMaster()) {
        const results: boolean[] = [];
        for (let i = 0; i < 4; i++) results.push(await limiter.limit(id));
        expect(results, `id ${id} on ${master}`).to.deep.equal([false, false, false, true]);
        expect(await masterConnection(master).exists(new KeyBuilder(namespace).keyFor(id)), `key of ${id} on ${master}`).to.equal(1);
        await limiter.clear(id);
      }
    });
  }

  it('decides a stack of two limiters on an ioredis Cluster, for ids on every master', async () => {
    const perMinute = new RollingRateLimiter({ client: clusterClient(), namespace: namespaces.next('minute'), interval: 60_000, maxInInterval: 2 });
    const perSecond = new RollingRateLimiter({ client: clusterClient(), namespace: namespaces.next('second'), interval: 1_000, maxInInterval: 1 });
    const stack = new RateLimiterStack([perMinute, perSecond]);
    for (const [master, id] of oneIdPerMaster()) {
      expect(await stack.limit(id), `first attempt of ${id} on ${master}`).to.equal(false);
      const second = await stack.limitWithInfo(id);
      expect(second.blocked, `second attempt of ${id} on ${master}`).to.equal(true);
      expect(second.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
      await stack.clear(id);
    }
  });
});

/** Number of keys matching `pattern` on one node, by SCAN. */
async function countKeys(node: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    count += keys.length;
  } while (cursor !== '0');
  return count;
}
