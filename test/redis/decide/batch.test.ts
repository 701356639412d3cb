// `batch: true` on a real redis-server: concurrent decisions share script
// calls, each is answered as if it had been sent alone and in call order, a
// lone call goes out at once, and a failed call fails each of its callers.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import sinon from 'sinon';
import { RateLimiterStack, RollingRateLimiter, StoreError, TimeoutError, UnsupportedError } from '../../../src/index.js';
import { escapeIdentifier } from '../../../src/core/identity.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { recordCount } from '../../support/redis-keys.js';
import { MAX_BATCH_ARGUMENTS } from '../../../src/redis/decide/decision-batcher.js';

/** The Redis key of `id` under a limiter (what src/core/identity.ts builds). */
const keyOf = (limiter: RollingRateLimiter | undefined, id: string): string => `${escapeIdentifier(limiter?.namespace ?? '')}:{${id}}`;

describe('batch: true on real Redis (ioredis)', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('batch');
  before(() => {
    client = connection.client;
  });
  afterEach(() => sinon.restore());

  const limiter = (options: Partial<ConstructorParameters<typeof RollingRateLimiter>[0]> = {}): RollingRateLimiter =>
    new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 10, batch: true, ...options });

  for (const countBlocked of [true, false]) {
    it(`answers 64 concurrent calls in two script calls (two batches out at once), in call order (countBlocked: ${String(countBlocked)})`, async () => {
      const evalsha = sinon.spy(client, 'evalsha');
      const push = limiter({ countBlocked });
      const answers = await Promise.all(Array.from({ length: 64 }, () => push.limitWithInfo('user')));
      expect(evalsha.callCount, 'script calls').to.equal(2);
      expect(answers.map((info) => info.blocked)).to.deep.equal([...Array<boolean>(10).fill(false), ...Array<boolean>(54).fill(true)]);
      expect(answers.map((info) => info.actionsRemaining).slice(0, 11)).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]);
      const recorded = await recordCount(client, keyOf(push, 'user'));
      expect(recorded).to.equal(10);
    });
  }

  it('sends a lone call at once, without waiting for a later turn of the event loop', async () => {
    const evalsha = sinon.spy(client, 'evalsha');
    const push = limiter();
    const decision = push.limit('lone');
    for (let i = 0; i < 20; i += 1) await Promise.resolve();
    expect(evalsha.callCount, 'sent within the same turn').to.equal(1);
    expect(await decision).to.equal(false);
  });

  it('splits more than 256 calls into batches of at most 256', async () => {
    const evalsha = sinon.spy(client, 'evalsha');
    const push = limiter({ maxInInterval: 300 });
    const answers = await Promise.all(Array.from({ length: 600 }, (_, i) => push.limit(`user-${i % 3}`)));
    expect(answers.filter((blocked) => !blocked)).to.have.length(600);
    expect(evalsha.callCount).to.equal(3);
    // Two keys per decision: the key and its companion set.
    for (const call of evalsha.getCalls()) expect(call.args[1], 'keys in one call').to.equal(400);
  });

  it('decides 1,024 concurrent attempts of a 100-tier stack (505 keys and arguments each), and an unrelated limiter after them', async () => {
    const evalsha = sinon.spy(client, 'evalsha');
    // 1,024 decisions of 100 tiers each take Redis about a second unloaded: a correctness test, given a timeout a loaded machine meets.
    const stack = new RateLimiterStack(
      Array.from({ length: 100 }, () => limiter({ maxInInterval: 1_000, timeout: '30s' })),
      { batch: true },
    );
    const answers = await Promise.all(Array.from({ length: 1_024 }, (_, i) => stack.limit(`user-${i % 16}`)));
    expect(
      answers.filter((blocked) => !blocked),
      'admitted',
    ).to.have.length(1_024);
    const largest = Math.max(...evalsha.getCalls().map((call) => (call.args as unknown[]).flat().length));
    expect(largest, 'keys and arguments in the largest script call').to.be.at.most(MAX_BATCH_ARGUMENTS + 2);
    const unrelated = limiter();
    const unrelatedAnswers = await Promise.all(Array.from({ length: 20 }, () => unrelated.limit('other')));
    expect(unrelatedAnswers.filter((blocked) => !blocked)).to.have.length(10);
  });

  it('batches decisions of different limiters and stacks on one client, and every mode: gaps, action ids, dry runs, the Redis clock', async () => {
    const evalsha = sinon.spy(client, 'evalsha');
    const spaced = limiter({ maxInInterval: 5, minDifference: 1000 });
    const onRedisTime = limiter({ maxInInterval: 2, clock: 'redis', countBlocked: false });
    const tiers = [limiter({ maxInInterval: 3 }), limiter({ maxInInterval: 1, countBlocked: false })];
    const stack = new RateLimiterStack(tiers, { batch: true });
    const [a, b, c, d, e, f, g, h] = await Promise.all([
      spaced.limit('x'),
      spaced.limit('x'),
      onRedisTime.limit('y', { actionId: 'job-1' }),
      onRedisTime.limit('y', { actionId: 'job-1' }),
      onRedisTime.wouldLimitWithInfo('y'),
      stack.limitWithInfo('z'),
      stack.limitWithInfo('z'),
      stack.wouldLimit('z'),
    ]);
    expect(evalsha.callCount, 'two script calls of four').to.equal(2);
    expect([a, b], 'the second is within minDifference').to.deep.equal([false, true]);
    expect([c, d], 'a replayed action id is admitted again').to.deep.equal([false, false]);
    expect(e.actionsRemaining, 'the dry run sees one recorded action').to.equal(0);
    expect(f.blocked).to.equal(false);
    expect(g.blocked).to.equal(true);
    expect(g.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
    expect(h).to.equal(true);
    expect(await recordCount(client, keyOf(tiers[0], 'z')), 'the first tier counts the blocked attempt').to.equal(2);
    expect(await recordCount(client, keyOf(tiers[1], 'z')), 'the second tier does not').to.equal(1);
  });

  it('fails each caller of a failed call, each under its own onStoreError policy', async () => {
    sinon.stub(client, 'evalsha').rejects(new Error('ERR something broke'));
    const throwing = limiter();
    const allowing = limiter({ onStoreError: 'allow', circuitBreaker: false });
    const outcomes = await Promise.allSettled([throwing.limit('u'), allowing.limit('u'), throwing.limit('v')]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'fulfilled', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason).to.be.instanceOf(StoreError);
    expect((outcomes[1] as PromiseFulfilledResult<boolean>).value).to.equal(false);
  });

  it('times out each caller of a call that stalls', async () => {
    sinon.stub(client, 'evalsha').returns(new Promise(() => undefined));
    const push = limiter({ timeout: 50 });
    const outcomes = await Promise.allSettled([push.limit('a'), push.limit('b')]);
    for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).to.be.instanceOf(TimeoutError);
  });

  it('is refused on the in-memory store, with useScript: false, and on a stack of in-memory limiters', () => {
    expect(() => new RollingRateLimiter({ interval: 1000, maxInInterval: 1, batch: true })).to.throw(UnsupportedError, /needs a Redis `client`/);
    expect(() => limiter({ useScript: false })).to.throw(UnsupportedError, /useScript: false/);
    const inMemory = [new RollingRateLimiter({ interval: 1000, maxInInterval: 1 })];
    expect(() => new RateLimiterStack(inMemory, { batch: true })).to.throw(UnsupportedError, /needs a Redis `client`/);
    expect(() => limiter({ batch: 'yes' as unknown as boolean })).to.throw(TypeError, /`batch` to be a boolean/);
  });
});
