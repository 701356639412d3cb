// The check of the Redis server at a client's first call (src/redis/server-checks.ts),
// on a real redis-server whose maxmemory-policy each case sets with CONFIG SET:
// an evicting policy is warned about once per client (process.emitWarning with
// its code, and the warning channel), noeviction is not; a server that refuses
// CONFIG is read through INFO; a client whose check fails, or never answers,
// decides as if there were no check; redis-mock is not checked. A Cluster
// client asks one node, and warns once. And the reader of the policy takes
// every shape of reply the clients give.

import { expect } from 'chai';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import redisMock from 'redis-mock';
import { createClient } from 'redis5';
import sinon from 'sinon';
import { WARNING_CHANNEL, type WarningMessage } from '../../src/core/diagnostics.js';
import { RollingRateLimiter } from '../../src/index.js';
import type { RedisAdapter } from '../../src/redis/adapters/adapter.js';
import type { RedisClient } from '../../src/redis/adapters/client-types.js';
import { adapterFor } from '../../src/redis/adapters/create-adapter.js';
import { checkServerOnce, policyIn, SERVER_WARNING_CODES } from '../../src/redis/server-checks.js';
import { CLUSTER_CLIENTS } from '../support/cluster-clients.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const CODE = SERVER_WARNING_CODES.evictingPolicy;

describe('the check of the Redis server at the first call', function () {
  this.timeout(20_000);
  const namespaces = uniqueNamespaces('server-checks');
  // A sandbox of this file's own: the default sandbox may still hold another file's fakes.
  const sandbox = sinon.createSandbox();
  let server: RedisServer;
  let admin: Redis;
  const clients: Redis[] = [];
  let emitWarning: sinon.SinonStub;
  const published: WarningMessage[] = [];
  const onWarning = (message: unknown): void => void published.push(message as WarningMessage);

  before(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    subscribe(WARNING_CHANNEL, onWarning);
  });

  after(async () => {
    unsubscribe(WARNING_CHANNEL, onWarning);
    for (const client of clients) client.disconnect();
    admin?.disconnect();
    await server?.stop();
  });

  beforeEach(() => {
    emitWarning = sandbox.stub(process, 'emitWarning');
    published.length = 0;
  });

  afterEach(async () => {
    sandbox.restore();
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
  });

  /** A new ioredis client: the check is once per client. */
  const newClient = (): Redis => {
    const client = new Redis(server.url);
    clients.push(client);
    return client;
  };

  /** A limiter on `client` that has decided `calls` attempts and dry runs, with the client's check over. */
  const decided = async (client: object, calls = 4): Promise<RollingRateLimiter> => {
    const limiter = new RollingRateLimiter({ client: client as RedisClient, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2 });
    const answers: boolean[] = [];
    for (let i = 0; i < calls; i += 1) answers.push(i % 2 === 0 ? await limiter.limit('user') : await limiter.wouldLimit('user'));
    expect(answers.slice(0, 4), 'decided as usual').to.deep.equal([false, false, false, true].slice(0, calls));
    await checkServerOnce(adapterFor(client));
    return limiter;
  };

  /** The codes of the warnings emitted so far. */
  const warnedCodes = (): unknown[] => emitWarning.getCalls().map((call) => (call.args[1] as { code?: string } | undefined)?.code);

  for (const policy of ['allkeys-lru', 'volatile-ttl']) {
    it(`warns once per client, with its code and the policy, under maxmemory-policy ${policy}`, async () => {
      await admin.config('SET', 'maxmemory-policy', policy);
      const client = newClient();
      await decided(client);
      await decided(client); // a second limiter on the same client
      expect(warnedCodes()).to.deep.equal([CODE]);
      const [message, options] = emitWarning.firstCall.args as [string, { type: string; code: string }];
      expect(options).to.deep.equal({ type: 'RateLimiterWarning', code: CODE });
      expect(message).to.include(`maxmemory-policy ${policy}`).and.to.include('noeviction').and.to.include('ioredis');
      expect(published).to.deep.equal([{ code: CODE, message, store: 'ioredis' }]);

      await decided(newClient());
      expect(warnedCodes(), 'another client warns once more').to.deep.equal([CODE, CODE]);
    });
  }

  it('says nothing under noeviction', async () => {
    await decided(newClient());
    expect(emitWarning.called).to.equal(false);
    expect(published).to.deep.equal([]);
  });

  it('reads the policy from INFO memory when the server refuses CONFIG', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const client = newClient();
    const adapter = adapterFor(client) as Required<RedisAdapter>;
    const sent = sandbox
      .stub(adapter, 'serverCommand')
      .callsFake((command) =>
        command[0] === 'config' ? Promise.reject(new Error("ERR unknown command 'config'")) : client.call(...(command as [string, ...string[]])),
      );
    await decided(client);
    expect(sent.getCalls().map((call) => call.args[0][0])).to.deep.equal(['config', 'info']);
    expect(warnedCodes()).to.deep.equal([CODE]);
  });

  it('decides as usual, and says nothing, when the check fails or never answers', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const throwing = newClient();
    sandbox.stub(adapterFor(throwing) as Required<RedisAdapter>, 'serverCommand').throws(new Error('NOPERM this user has no permissions to run the command'));
    await decided(throwing);
    const rejecting = newClient();
    sandbox.stub(adapterFor(rejecting) as Required<RedisAdapter>, 'serverCommand').rejects(new Error("ERR unknown command 'info'"));
    await decided(rejecting);
    const silent = newClient();
    sandbox.stub(adapterFor(silent) as Required<RedisAdapter>, 'serverCommand').returns(new Promise(() => undefined));
    const limiter = new RollingRateLimiter({ client: silent, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1 });
    expect([await limiter.limit('user'), await limiter.limit('user')], 'a check that never answers holds nothing up').to.deep.equal([false, true]);
    expect(emitWarning.called).to.equal(false);
  });

  it('warns through node-redis too', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lfu');
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      await decided(client);
      expect(warnedCodes()).to.deep.equal([CODE]);
      expect(published[0]?.message).to.include('maxmemory-policy allkeys-lfu').and.to.include('node-redis');
    } finally {
      client.destroy();
    }
  });

  it('publishes on the warning channel where there is no process.emitWarning', async () => {
    sandbox.restore();
    const host = process as { emitWarning?: unknown };
    const original = host.emitWarning;
    host.emitWarning = undefined;
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-random');
      await decided(newClient());
    } finally {
      host.emitWarning = original;
    }
    expect(published.map((message) => message.code)).to.deep.equal([CODE]);
  });

  it('does not check redis-mock, which is no server', async () => {
    const client = redisMock.createClient() as unknown as RedisClient;
    expect('serverCommand' in adapterFor(client)).to.equal(false);
    await decided(client, 2);
    expect(emitWarning.called).to.equal(false);
  });
});

describe('the check of a Redis Cluster at the first call', function () {
  this.timeout(60_000);
  const namespaces = uniqueNamespaces('server-checks-cluster');
  const sandbox = sinon.createSandbox();
  let cluster: RedisClusterHandle;

  before(async () => {
    cluster = await startRedisCluster();
    for (const url of cluster.urls) {
      const node = new Redis(url);
      await node.config('SET', 'maxmemory-policy', 'volatile-lru');
      node.disconnect();
    }
  });

  after(async () => {
    await cluster?.stop();
  });

  afterEach(() => sandbox.restore());

  for (const kind of CLUSTER_CLIENTS) {
    it(`${kind.name}: asks one node and warns once`, async () => {
      const emitWarning = sandbox.stub(process, 'emitWarning');
      const connected = await kind.connect(cluster);
      const { client } = connected;
      try {
        const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1 });
        // Ids on every master.
        for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) expect(await limiter.limit(id), id).to.equal(false);
        await checkServerOnce(adapterFor(client));
        expect(emitWarning.callCount).to.equal(1);
        const [message, options] = emitWarning.firstCall.args as [string, { code: string }];
        expect(options.code).to.equal(CODE);
        expect(message)
          .to.match(/^A node of the Redis Cluster /)
          .and.to.include('maxmemory-policy volatile-lru')
          .and.to.include('every node');
      } finally {
        await connected.close();
      }
    });
  }
});

describe('reading maxmemory-policy from a reply', () => {
  const shapes: readonly [string, unknown][] = [
    ['CONFIG GET, RESP2', ['maxmemory-policy', 'allkeys-lru']],
    ['CONFIG GET, a RESP3 map as an object', { 'maxmemory-policy': 'allkeys-lru' }],
    ['CONFIG GET, a RESP3 map as a Map', new Map([['maxmemory-policy', 'allkeys-lru']])],
    ['CONFIG GET, GLIDE', [{ key: 'maxmemory-policy', value: 'allkeys-lru' }]],
    ['CONFIG GET, as bytes', [Buffer.from('maxmemory-policy'), Buffer.from('allkeys-lru')]],
    ['INFO memory', '# Memory\r\nused_memory:1\r\nmaxmemory:0\r\nmaxmemory_policy:allkeys-lru\r\nallocator_frag_ratio:1.0\r\n'],
    ['INFO memory, one per node', { '127.0.0.1:7000': 'maxmemory_policy:allkeys-lru\r\n', '127.0.0.1:7001': 'maxmemory_policy:noeviction\r\n' }],
    ['INFO memory, one per node, GLIDE', [{ key: '127.0.0.1:7000', value: '# Memory\r\nmaxmemory_policy:allkeys-lru\r\n' }]],
  ];
  for (const [name, reply] of shapes) {
    it(name, () => {
      expect(policyIn(reply)).to.equal('allkeys-lru');
    });
  }

  it('finds none in a reply that has none', () => {
    for (const reply of [[], {}, 'OK', null, 42, ['maxmemory-policy'], '# Memory\r\nused_memory:1\r\n'])
      expect(policyIn(reply), JSON.stringify(reply)).to.equal(undefined);
  });
});
