// Errors that say what is wrong with the connection, on real clients:
//   - a TimeoutError while the client is not connected names the client and
//     its state, carries the client's last connection error (connection
//     refused) as `cause`, and does not advise a longer timeout;
//   - a node-redis client (plain, cluster, sentinel) that was never
//     connected, or was closed, is named as such, with `await client.connect()`;
//   - watching the clients' errors changes nothing about how they report them:
//     no 'error' listener is added, and ioredis still prints its "Unhandled
//     error event" warning when the application has no listener of its own.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import sinon from 'sinon';
import { createClient, createCluster, createSentinel } from 'redis5';
import { RollingRateLimiter, StoreError, TimeoutError } from '../../../src/index.js';
import { adapterFor } from '../../../src/redis/adapters/create-adapter.js';
import { callStore } from '../../../src/resilience/store-call.js';
import { findFreeLoopbackPort } from '../../support/free-port.js';
import { retryUntil } from '../../support/fault-injection.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const rules = { namespace: 'connection-errors', interval: 1_000, maxInInterval: 5 } as const;

describe('errors that say what is wrong with the connection', function () {
  this.timeout(20_000);

  describe('TimeoutError', () => {
    it('keeps its message when the client looks connected', () => {
      const error = new TimeoutError(250);
      expect(error.message).to.equal('The store did not answer within 250 ms; check that Redis is reachable, or raise the `timeout` option');
      expect(error).to.not.have.property('cause');
    });

    it('names the connection problem, carries the client’s last error as cause, and does not advise a longer timeout', () => {
      const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6390'), { code: 'ECONNREFUSED' });
      const error = new TimeoutError(300, { summary: 'the ioredis client is not connected (status "reconnecting")', cause: refused });
      expect(error.cause).to.equal(refused);
      expect(error.message).to.equal(
        'The store did not answer within 300 ms: the ioredis client is not connected (status "reconnecting"); ' +
          'the last connection error: connect ECONNREFUSED 127.0.0.1:6390. A longer `timeout` would not help: check that Redis is running and reachable from here',
      );
      expect(new TimeoutError(300, { summary: 'x' })).to.not.have.property('cause');
    });
  });

  describe('ioredis on a port where nothing listens', () => {
    let port = 0;
    before(async () => {
      port = await findFreeLoopbackPort();
    });

    it('times out with the refusal as cause, read from its status and its error events', async () => {
      const client = new Redis({ host: '127.0.0.1', port, retryStrategy: () => 50, maxRetriesPerRequest: null });
      const seen: Error[] = [];
      client.on('error', (error: Error) => void seen.push(error)); // the application's own listener
      try {
        const adapter = adapterFor(client);
        await retryUntil('a refused connection', async () => (seen.length > 0 ? true : undefined), { timeoutMs: 5_000 });
        const error = await callStore(
          () => adapter.evalsha('0'.repeat(40), ['k'], []),
          200,
          'Recording an attempt',
          () => adapter.connectionProblem?.(),
        ).catch((caught: unknown) => caught);
        expect(error).to.be.instanceOf(TimeoutError);
        expect((error as TimeoutError).cause).to.have.property('code', 'ECONNREFUSED');
        expect((error as TimeoutError).message).to.match(
          /^The store did not answer within 200 ms: the ioredis client is not connected \(status "(reconnecting|connecting)"\)/,
        );
        expect((error as TimeoutError).message).to.not.contain('raise the `timeout`');
        console.log(`      ${(error as Error).message}`);
        // The same through a limiter: its store hands the adapter's diagnosis to the timeout.
        const viaLimiter = await new RollingRateLimiter({ ...rules, client, timeout: 200 }).limit('u').catch((caught: unknown) => caught);
        expect(viaLimiter).to.be.instanceOf(TimeoutError);
        expect((viaLimiter as TimeoutError).cause).to.have.property('code', 'ECONNREFUSED');
      } finally {
        client.disconnect();
      }
    });

    it('adds no error listener, and leaves ioredis’s warning about an unhandled error event as it was', async () => {
      const printed = sinon.stub(console, 'error');
      const client = new Redis({ host: '127.0.0.1', port, retryStrategy: () => 50 });
      try {
        const limiter = new RollingRateLimiter({ ...rules, client, timeout: 200 });
        expect(client.listenerCount('error')).to.equal(0);
        await limiter.limit('u').catch(() => undefined);
        const warned = (): boolean => printed.getCalls().some((call) => String(call.args[0]).includes('[ioredis] Unhandled error event'));
        const stillWarns = await retryUntil('the warning', async () => (warned() ? true : undefined), { timeoutMs: 3_000 }).catch(() => false);
        printed.restore();
        expect(stillWarns, 'ioredis still warns about the unhandled error event').to.equal(true);
        expect(client.listenerCount('error')).to.equal(0);
      } finally {
        printed.restore();
        client.disconnect();
      }
    });
  });

  describe('node-redis 5', () => {
    let redis: UsedRedis | undefined;
    before(async () => {
      redis = await useRedis();
    });
    after(async () => redis?.stop());
    const url = (): string => {
      if (redis === undefined) throw new Error('no server');
      return redis.url;
    };

    it('names a client that was never connected, or was closed, with `await client.connect()`', async () => {
      const never = createClient({ url: url() });
      const closed = createClient({ url: url() });
      await closed.connect();
      closed.destroy();
      const cluster = createCluster({ rootNodes: [{ url: url() }] });
      const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 1 }] });
      const cases = [
        ['node-redis', new RollingRateLimiter({ ...rules, client: never })],
        ['node-redis', new RollingRateLimiter({ ...rules, client: closed, countBlocked: false })],
        ['node-redis cluster', new RollingRateLimiter({ ...rules, client: cluster })],
        ['node-redis sentinel', new RollingRateLimiter({ ...rules, client: sentinel, countBlocked: false })],
      ] as const;
      for (const [kind, limiter] of cases) {
        const error = await limiter.limit('u').catch((caught: unknown) => caught);
        expect(error, kind).to.be.instanceOf(StoreError);
        expect((error as Error).message, kind).to.equal(
          `The ${kind} client is not connected (isOpen is false): node-redis clients do not connect by themselves, ` +
            'so call `await client.connect()` before the first call, and do not use the client after `quit()`, `close()` or `destroy()`',
        );
      }
    });

    it('says a client is reconnecting, with its last error, and adds no error listener', async () => {
      const port = await findFreeLoopbackPort();
      const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: () => 50 } });
      const seen: Error[] = [];
      client.on('error', (error: Error) => void seen.push(error)); // node-redis needs one, or it crashes the process
      const adapter = adapterFor(client);
      expect(client.listenerCount('error')).to.equal(1);
      try {
        void client.connect().catch(() => undefined); // it keeps reconnecting, so it never resolves
        await retryUntil('a refused connection', async () => (seen.length > 0 ? true : undefined), { timeoutMs: 5_000 });
        const problem = adapter.connectionProblem?.();
        expect(problem?.summary).to.equal('the node-redis client has lost its connection and is reconnecting (isReady is false)');
        expect(problem?.cause).to.be.instanceOf(Error);
        expect(client.listenerCount('error')).to.equal(1);
      } finally {
        if (client.isOpen) client.destroy();
      }
    });
  });
});
