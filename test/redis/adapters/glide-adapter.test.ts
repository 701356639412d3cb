// The Valkey GLIDE adapter: recognised from GLIDE 2's own classes without the
// library importing GLIDE; calls sent as GLIDE takes them (every argument a
// string, routed by the first key on a cluster); GLIDE's wording of server
// errors given back the Redis codes the library reads; the slot map read from
// CLUSTER SLOTS. On real servers: a forgotten script (SCRIPT FLUSH) is sent
// again, in every mode, and the circuit breaker opens on a dead server and
// closes once it is back.

import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import sinon from 'sinon';
import { GlideClient, GlideClusterClient, type GlideClient as GlideClientType } from '@valkey/valkey-glide';
import { RollingRateLimiter, StoreError } from '../../../src/index.js';
import { adapterFor } from '../../../src/redis/adapters/create-adapter.js';
import { GlideAdapter, redisErrorOf } from '../../../src/redis/adapters/glide-adapter.js';
import { ownersOf } from '../../../src/redis/adapters/glide-slot-map.js';
import { connectGlide } from '../../support/glide-clients.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

/** GLIDE's wording of a server error, as its RequestError carries it. */
const glideError = (kind: string, message: string): Error => new Error(`An error was signalled by the server: - ${kind}: ${message}`);

/** A GLIDE-shaped client whose `customCommand` is a stub. */
function fakeGlide(cluster: boolean, customCommand = sinon.stub().resolves('OK')): { client: object; customCommand: sinon.SinonStub } {
  const client: Record<string, unknown> = { customCommand, exec: async () => null, invokeScript: async () => null };
  if (cluster) client.invokeScriptWithRoute = async () => null;
  return { client, customCommand };
}

describe('Valkey GLIDE adapter', () => {
  it('recognises GLIDE 2 GlideClient and GlideClusterClient by their members', () => {
    const standalone = adapterFor(Object.create(GlideClient.prototype) as object);
    const cluster = adapterFor(Object.create(GlideClusterClient.prototype) as object);
    expect([standalone.kind, standalone.isCluster, standalone.supportsScripts]).to.deep.equal(['Valkey GLIDE', false, true]);
    expect([cluster.kind, cluster.isCluster, cluster.supportsScripts]).to.deep.equal(['Valkey GLIDE cluster', true, true]);
    expect(standalone.slotOwner?.('k')).to.equal(undefined);
  });

  it('sends EVALSHA with every argument a string, on a cluster routed to the master of the first key', async () => {
    const { client, customCommand } = fakeGlide(true, sinon.stub().resolves(7));
    const adapter = new GlideAdapter(client as never);
    expect(await adapter.evalsha('abc', ['{a}x', '{a}y'], [1, 'two'])).to.equal(7);
    expect(customCommand.lastCall.args).to.deep.equal([
      ['EVALSHA', 'abc', '2', '{a}x', '{a}y', '1', 'two'],
      { route: { type: 'primarySlotKey', key: '{a}x' } },
    ]);
  });

  it('sends a standalone call without a route', async () => {
    const { client, customCommand } = fakeGlide(false);
    await new GlideAdapter(client as never).eval('return 1', ['k'], []);
    expect(customCommand.lastCall.args).to.deep.equal([['EVAL', 'return 1', '1', 'k']]);
  });

  it('runs a transaction as one call of the atomic block script, each command led by its length', async () => {
    const { client, customCommand } = fakeGlide(false, sinon.stub().resolves([1, 2]));
    expect(
      await new GlideAdapter(client as never).transaction([
        ['zadd', 'k', 5, 'm'],
        ['pexpire', 'k', 10],
      ]),
    ).to.deep.equal([1, 2]);
    const [command] = customCommand.lastCall.args as [string[]];
    expect(command.slice(0, 1)).to.deep.equal(['EVALSHA']);
    expect(command.slice(2)).to.deep.equal(['1', 'k', '4', 'zadd', 'k', '5', 'm', '3', 'pexpire', 'k', '10']);
  });

  it('gives GLIDE’s server errors back the Redis codes the library reads, with GLIDE’s error as the cause', () => {
    const noScript = glideError('NoScriptError', 'No matching script. Please use EVAL.');
    expect((redisErrorOf(noScript) as Error).message).to.equal('NOSCRIPT No matching script. Please use EVAL.');
    expect((redisErrorOf(noScript) as Error).cause).to.equal(noScript);
    expect((redisErrorOf(glideError('PermissionDenied', 'no permissions')) as Error).message).to.equal('NOPERM no permissions');
    expect((redisErrorOf(glideError('Moved', '1697 127.0.0.1:7001')) as Error).message).to.equal('MOVED 1697 127.0.0.1:7001');
    const other = new Error('WRONGTYPE: Operation against a key holding the wrong kind of value');
    expect(redisErrorOf(other)).to.equal(other);
    expect(redisErrorOf('not an error')).to.equal('not an error');
  });

  it('sends a cluster call again when GLIDE gives up on a redirection, and only then', async () => {
    const customCommand = sinon.stub();
    customCommand.onCall(0).resolves([]); // CLUSTER SLOTS, when the adapter is made
    customCommand.onCall(1).rejects(glideError('Moved', '1697 127.0.0.1:7001'));
    customCommand.onCall(2).resolves('decided');
    customCommand.onCall(3).rejects(glideError('ResponseError', 'nope'));
    const adapter = new GlideAdapter(fakeGlide(true, customCommand).client as never);
    expect(await adapter.evalsha('abc', ['k'], [])).to.equal('decided');
    const failed = await adapter.evalsha('abc', ['k'], []).catch((error: unknown) => error);
    expect(failed).to.be.instanceOf(Error);
    expect(customCommand.callCount).to.equal(4);
  });

  it('sends a call refused with MOVED again to the master MOVED names, by address (IPv4 and IPv6)', async () => {
    for (const [address, host, port] of [
      ['127.0.0.1:7001', '127.0.0.1', 7001],
      ['::1:7002', '::1', 7002],
    ] as const) {
      const customCommand = sinon.stub();
      customCommand.onCall(0).resolves([]); // CLUSTER SLOTS, when the adapter is made
      customCommand.onCall(1).rejects(glideError('Moved', `1697 ${address}`));
      customCommand.onCall(2).resolves('decided');
      const adapter = new GlideAdapter(fakeGlide(true, customCommand).client as never);
      expect(await adapter.evalsha('abc', ['k'], [])).to.equal('decided');
      expect(customCommand.getCall(1).args[1], 'first by the key').to.deep.equal({ route: { type: 'primarySlotKey', key: 'k' } });
      expect(customCommand.getCall(2).args[1], 'then where MOVED said').to.deep.equal({ route: { type: 'routeByAddress', host, port } });
    }
  });

  it('reads each slot’s master from CLUSTER SLOTS, and names it for a key', async () => {
    const slots = [
      [0, 8191, ['127.0.0.1', 7001, 'id1'], ['127.0.0.1', 7004, 'id4']],
      [8192, 16383, ['127.0.0.1', 7002, 'id2']],
    ];
    expect(ownersOf(slots)[0]).to.equal('127.0.0.1:7001');
    expect(ownersOf(slots)[16383]).to.equal('127.0.0.1:7002');
    expect(ownersOf('nonsense')).to.deep.equal([]);
    expect(ownersOf([[0, 10, ['', 7001]], 'x'])[0]).to.equal(undefined);
    const { client, customCommand } = fakeGlide(true, sinon.stub().resolves(slots));
    const adapter = new GlideAdapter(client as never);
    await delay(0);
    expect(customCommand.firstCall.args).to.deep.equal([['CLUSTER', 'SLOTS'], { route: 'randomNode' }]);
    expect(adapter.slotOwner('{user-1}')).to.be.oneOf(['127.0.0.1:7001', '127.0.0.1:7002']);
  });
});

describe('Valkey GLIDE on a real Redis', function () {
  this.timeout(30_000);
  const namespaces = uniqueNamespaces('glide-adapter');
  let server: RedisServer | undefined;
  let client: GlideClientType | undefined;
  before(async function () {
    this.timeout(20_000);
    server = await startRedisServer();
    client = await connectGlide([{ host: server.host, port: server.port }]);
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  for (const [mode, extra] of [
    ['the default mode', {}],
    ['countBlocked: false', { countBlocked: false }],
    ['useScript: false (the atomic block script)', { useScript: false }],
    ['batch: true', { batch: true }],
  ] as const) {
    it(`${mode}: decides right after SCRIPT FLUSH (EVALSHA answered NOSCRIPT, sent again as EVAL)`, async () => {
      if (client === undefined) throw new Error('not connected');
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, ...extra });
      expect(await limiter.limit('a')).to.equal(false);
      await client.customCommand(['SCRIPT', 'FLUSH']);
      expect(await limiter.limit('a')).to.equal(false);
      expect(await limiter.limit('a')).to.equal(true);
      await client.customCommand(['SCRIPT', 'FLUSH']);
      await limiter.clear('a');
      expect(await limiter.limit('a')).to.equal(false);
    });
  }

  it('opens the circuit when the server is gone, and closes it once the server is back', async () => {
    if (server === undefined || client === undefined) throw new Error('not connected');
    const limiter = new RollingRateLimiter({
      client,
      namespace: namespaces.next(),
      interval: 60_000,
      maxInInterval: 100,
      timeout: 300,
      circuitBreaker: { failureThreshold: 2, cooldown: 500 },
    });
    expect(await limiter.limit('a')).to.equal(false);
    await server.kill();
    const codes: string[] = [];
    for (let i = 0; i < 4; i++) codes.push(await limiter.limit('a').then(String, (error: unknown) => (error as StoreError).code ?? 'no code'));
    expect(codes.slice(2), `codes: ${codes.join(', ')}`).to.deep.equal(['CIRCUIT_OPEN', 'CIRCUIT_OPEN']);
    await server.restart();
    let recovered = false;
    for (let i = 0; i < 100 && !recovered; i++) {
      recovered = await limiter.limit('a').then(
        () => true,
        () => false,
      );
      if (!recovered) await delay(50);
    }
    expect(recovered, 'a call succeeds within 5 s of the restart').to.equal(true);
  });
});
