// The @upstash/redis adapter: recognised from the client's members (also behind
// its automatic pipelining, a Proxy) without the library importing it; scripts
// sent as `evalsha(sha, keys, args)` with every argument a string; the client's
// wording of errors taken back to Redis's (`NOSCRIPT …`). On a real Redis behind
// the Upstash-REST-compatible test endpoint, with the client's defaults and with
// automatic deserialisation, base64 and automatic pipelining off: a forgotten
// script is sent again; a member that reads as a number comes back as text from
// a transaction; a wrong token, a refused command and a silent endpoint become
// the library's errors, and the circuit opens; the server check reads the policy
// through INFO where CONFIG is refused; and `batch: true` decides many attempts
// in one HTTP request.

import { expect } from 'chai';
import sinon from 'sinon';
import { Redis as UpstashRedis, type RedisConfigNodejs } from '@upstash/redis';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, StoreError, TimeoutError, type RedisClient } from '../../../src/index.js';
import { adapterFor } from '../../../src/redis/adapters/create-adapter.js';
import { UpstashAdapter, upstashErrorOf } from '../../../src/redis/adapters/upstash-adapter.js';
import { readScoredMembers } from '../../../src/redis/replies.js';
import { checkServerOnce, SERVER_WARNING_CODES } from '../../../src/redis/server-checks.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../../support/upstash-rest-endpoint.js';

/** The client's options besides its URL and token. */
type ClientOptions = Omit<RedisConfigNodejs, 'url' | 'token'>;

/** An @upstash/redis-shaped client whose script calls are stubs. */
function fakeUpstash(evalsha = sinon.stub().resolves([1])): { client: object; evalsha: sinon.SinonStub; evalScript: sinon.SinonStub; exec: sinon.SinonStub } {
  const evalScript = sinon.stub().resolves([1]);
  const exec = sinon.stub().resolves('ok');
  const client = { evalsha, eval: evalScript, exec, scriptLoad: async () => 'sha', multi: () => ({}), pipeline: () => ({}) };
  return { client, evalsha, evalScript, exec };
}

/** The errors an error was caused by, nearest first. */
function causesOf(error: Error): Error[] {
  const causes: Error[] = [];
  for (let cause = error.cause; cause instanceof Error; cause = cause.cause) causes.push(cause);
  return causes;
}

describe('@upstash/redis adapter', () => {
  it('recognises an @upstash/redis client by its members, with automatic pipelining (a Proxy) or without', () => {
    for (const enableAutoPipelining of [true, false]) {
      const adapter = adapterFor(new UpstashRedis({ url: 'http://127.0.0.1:1', token: 't', enableAutoPipelining, enableTelemetry: false }));
      expect(adapter).to.be.instanceOf(UpstashAdapter);
      expect([adapter.kind, adapter.isCluster, adapter.supportsScripts]).to.deep.equal(['@upstash/redis', false, true]);
    }
  });

  it('is accepted by the `client` option as its own type, without a cast', () => {
    const client: RedisClient = new UpstashRedis({ url: 'http://127.0.0.1:1', token: 't', enableTelemetry: false });
    expect(new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxInInterval: 1 }).namespace).to.equal('n');
  });

  it('sends EVALSHA and EVAL as (sha or script, keys, args), every argument a string', async () => {
    const { client, evalsha, evalScript } = fakeUpstash(sinon.stub().resolves([7]));
    const adapter = new UpstashAdapter(client as never);
    expect(await adapter.evalsha('abc', ['k1', 'k2'], [1, 'two', 1.5, Infinity])).to.deep.equal([7]);
    expect(evalsha.lastCall.args).to.deep.equal(['abc', ['k1', 'k2'], ['1', 'two', '1.5', 'Infinity']]);
    await adapter.eval('return 1', ['k'], [2]);
    expect(evalScript.lastCall.args).to.deep.equal(['return 1', ['k'], ['2']]);
  });

  it('runs a transaction as one call of the atomic block script, and gives back as text the numbers and booleans inside array replies', async () => {
    const { client, evalsha } = fakeUpstash(sinon.stub().resolves([1, 3, [-42, 1763700000000123, true, 7]]));
    const replies = await new UpstashAdapter(client as never).transaction([
      ['zremrangebyscore', 'k', '-inf', 5],
      ['zcount', 'k', '(5', '+inf'],
      ['zrevrange', 'k', 0, 1, 'withscores'],
    ]);
    expect(replies).to.deep.equal([1, 3, ['-42', '1763700000000123', 'true', '7']]);
    expect(readScoredMembers(replies[2], 'ZREVRANGE')).to.deep.equal([
      { member: '-42', score: 1763700000000123 },
      { member: 'true', score: 7 },
    ]);
    const [, keys, args] = evalsha.lastCall.args as [string, string[], string[]];
    expect(keys).to.deep.equal(['k']);
    expect(args.slice(0, 5)).to.deep.equal(['4', 'zremrangebyscore', 'k', '-inf', '5']);
  });

  it('sends a keyless command by `exec`, and refuses it (harmlessly) on a client without one', async () => {
    const { client, exec } = fakeUpstash();
    await new UpstashAdapter(client as never).serverCommand(['config', 'get', 'maxmemory-policy']);
    expect(exec.lastCall.args).to.deep.equal([['config', 'get', 'maxmemory-policy']]);
    const withoutExec = { ...client, exec: undefined };
    await new UpstashAdapter(withoutExec as never).serverCommand(['info', 'memory']).then(
      () => expect.fail('resolved'),
      (error: unknown) => expect(String(error)).to.match(/no `exec`/),
    );
  });

  it('takes Redis’s error out of each of the client’s wordings, with the client’s error as the cause', () => {
    const cases: [string, string][] = [
      ['Command failed: NOSCRIPT No matching script. Please use EVAL.', 'NOSCRIPT No matching script. Please use EVAL.'],
      ['NOSCRIPT No matching script. Please use EVAL., command was: ["evalsha","abc",1,"k"]', 'NOSCRIPT No matching script. Please use EVAL.'],
      ['Command 1 [ evalsha ] failed: NOPERM this user has no permissions', 'NOPERM this user has no permissions'],
      ['Unauthorized, command was: [["evalsha","abc"]]', 'Unauthorized'],
    ];
    for (const [wrapped, unwrapped] of cases) {
      const original = new Error(wrapped);
      const error = upstashErrorOf(original) as Error;
      expect(error.message).to.equal(unwrapped);
      expect(error.cause).to.equal(original);
    }
    const other = new TypeError('fetch failed');
    expect(upstashErrorOf(other)).to.equal(other);
    expect(upstashErrorOf('not an error')).to.equal('not an error');
  });

  describe('on a real Redis behind the Upstash-REST-compatible endpoint', function () {
    this.timeout(30_000);
    const namespaces = uniqueNamespaces('upstash-adapter');
    let server: RedisServer;
    let endpoint: UpstashRestEndpoint;
    let admin: Redis;
    before(async () => {
      server = await startRedisServer();
      endpoint = await startUpstashRestEndpoint({ redisUrl: server.url });
      admin = new Redis(server.url);
    });
    after(async () => {
      admin?.disconnect();
      await endpoint?.close();
      await server?.stop();
    });
    const connect = (options: ClientOptions = {}): UpstashRedis =>
      new UpstashRedis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false, retry: false, ...options });

    const modes: [string, ClientOptions][] = [
      ['the client’s defaults', {}],
      [
        'automaticDeserialization, base64 and automatic pipelining off',
        { automaticDeserialization: false, responseEncoding: false, enableAutoPipelining: false },
      ],
    ];
    for (const [mode, options] of modes) {
      describe(`with ${mode}`, () => {
        it('sends a forgotten script again (SCRIPT FLUSH), unbatched, batched and as a transaction', async () => {
          const client = connect(options);
          const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1, countBlocked: false });
          const batched = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, batch: true });
          const multi = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1, useScript: false });
          for (let round = 0; round < 2; round += 1) {
            await admin.script('FLUSH');
            expect(await limiter.limit('user')).to.equal(round === 1);
            await admin.script('FLUSH');
            expect(await Promise.all([batched.limit('user'), batched.limit('user')])).to.deep.equal(round === 0 ? [false, false] : [true, true]);
            await admin.script('FLUSH');
            expect(await multi.limit('user')).to.equal(round === 1);
          }
        });

        it('reads a member that reads as a number as text, in a transaction (the MULTI path)', async () => {
          const key = `${namespaces.next()}:numeric`;
          await admin.zadd(key, 1763700000000123, '-42', 1763700000000456, '12345', 1763700000000789, 'true');
          const adapter = adapterFor(connect(options));
          const [count, range] = await adapter.transaction([
            ['zcard', key],
            ['zrevrange', key, 0, -1, 'withscores'],
          ]);
          expect(Number(count)).to.equal(3);
          expect(readScoredMembers(range, 'ZREVRANGE')).to.deep.equal([
            { member: 'true', score: 1763700000000789 },
            { member: '12345', score: 1763700000000456 },
            { member: '-42', score: 1763700000000123 },
          ]);
        });

        it('fails a call the server refuses with a StoreError in the server’s words, the client’s error as its cause', async () => {
          const refusing = await startUpstashRestEndpoint({ redisUrl: server.url, refuse: ['evalsha', 'eval'] });
          try {
            const client = new UpstashRedis({ url: refusing.url, token: refusing.token, enableTelemetry: false, retry: false, ...options });
            const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, circuitBreaker: false });
            const error = await limiter.limit('user').then(
              () => expect.fail('resolved'),
              (failure: unknown) => failure as StoreError,
            );
            expect(error).to.be.instanceOf(StoreError);
            expect(error.message)
              .to.match(/ERR Command is not available: 'EVALSHA'/)
              .and.not.to.match(/command was|Command failed/);
            const refusal = causesOf(error).find((cause) => cause.message === "ERR Command is not available: 'EVALSHA'");
            expect(refusal?.cause).to.have.property('name', 'UpstashError');
          } finally {
            await refusing.close();
          }
        });
      });
    }

    it('answers a wrong token with a StoreError (HTTP 401), and opens the circuit after five', async () => {
      const client = new UpstashRedis({ url: endpoint.url, token: 'not-the-token', enableTelemetry: false, retry: false });
      const limiter = new RollingRateLimiter({
        client,
        namespace: namespaces.next(),
        interval: 60_000,
        maxInInterval: 2,
        circuitBreaker: { failureThreshold: 5, cooldown: 60_000 },
      });
      const failures: unknown[] = [];
      for (let i = 0; i < 6; i += 1) failures.push(await limiter.limit('user').catch((error: unknown) => error));
      expect(failures.every((error) => error instanceof StoreError)).to.equal(true);
      expect((failures[0] as StoreError).message).to.match(/Unauthorized/);
      expect((failures[0] as StoreError).code).to.equal('ERR_RATE_LIMITER_STORE');
      expect((failures[5] as StoreError).code).to.equal('CIRCUIT_OPEN');
      expect(endpoint.stats.unauthorized).to.be.at.least(5);
    });

    it('times out on an endpoint whose Redis does not answer, with a TimeoutError', async () => {
      const paused = await startRedisServer();
      const silent = await startUpstashRestEndpoint({ redisUrl: paused.url });
      try {
        const client = new UpstashRedis({ url: silent.url, token: silent.token, enableTelemetry: false, retry: false });
        const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, timeout: 200 });
        expect(await limiter.limit('warm-up')).to.equal(false);
        paused.pause();
        const error = await limiter.limit('user').catch((failure: unknown) => failure);
        expect(error).to.be.instanceOf(TimeoutError);
      } finally {
        paused.resume();
        await silent.close();
        await paused.stop();
      }
    });

    it('reads the eviction policy through INFO where the endpoint refuses CONFIG (as Upstash does), and warns of an evicting one', async () => {
      const evicting = await startRedisServer({ extraArgs: ['--maxmemory-policy', 'allkeys-lru'] });
      const refusing = await startUpstashRestEndpoint({ redisUrl: evicting.url, refuse: ['config'] });
      const emitWarning = sinon.stub(process, 'emitWarning');
      try {
        const client = new UpstashRedis({ url: refusing.url, token: refusing.token, enableTelemetry: false, retry: false });
        const adapter = adapterFor(client);
        const refused = await adapter.serverCommand?.(['config', 'get', 'maxmemory-policy']).catch((error: unknown) => error);
        expect(String(refused)).to.match(/^Error: ERR Command is not available: 'CONFIG'/);
        await checkServerOnce(adapter);
        const codes = emitWarning.getCalls().map((call) => (call.args[1] as { code?: string } | undefined)?.code);
        expect(codes).to.deep.equal([SERVER_WARNING_CODES.evictingPolicy]);
        expect(String(emitWarning.firstCall.args[0])).to.include('@upstash/redis').and.to.include('allkeys-lru');
      } finally {
        emitWarning.restore();
        await refusing.close();
        await evicting.stop();
      }
    });

    it('decides 50 concurrent attempts in one or two HTTP requests with batch: true (a stack’s too), and in 50 without', async () => {
      const client = connect({ enableAutoPipelining: false });
      const namespace = namespaces.next();
      const batched = new RollingRateLimiter({ client, namespace, interval: 60_000, maxInInterval: 20, batch: true });
      const unbatched = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 20 });
      await Promise.all([batched.limit('warm-up'), unbatched.limit('warm-up')]); // the script loaded

      endpoint.resetStats();
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => batched.limit(`user-${i % 5}`)));
      expect(answers.filter((blocked) => !blocked)).to.have.length(50);
      expect(endpoint.stats.requests).to.be.within(1, 2);
      expect(endpoint.stats.commands).to.equal(endpoint.stats.requests);

      endpoint.resetStats();
      const stack = new RateLimiterStack(
        [
          new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 30, countBlocked: false }),
          new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 1_000, maxInInterval: 3, countBlocked: false }),
        ],
        { batch: true },
      );
      const stackAnswers = await Promise.all(Array.from({ length: 50 }, (_, i) => stack.limit(`user-${i % 5}`)));
      expect(stackAnswers.filter((blocked) => !blocked)).to.have.length(15);
      expect(endpoint.stats.requests).to.be.within(1, 2);

      endpoint.resetStats();
      await Promise.all(Array.from({ length: 50 }, (_, i) => unbatched.limit(`user-${i}`)));
      expect(endpoint.stats.requests).to.equal(50);
    });
  });
});
