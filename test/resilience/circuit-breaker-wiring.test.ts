// The circuit breaker as limiters and stacks use it (fake timers, and a Redis
// client from test/support/controlled-client.ts that hangs or answers on
// demand): after `failureThreshold` store failures in a row
// calls are decided by the policy at once, one call probes the store after
// `cooldownMs`, and a success closes the circuit. The state machine itself is
// tested in circuit-breaker.test.ts.

import { expect } from 'chai';
import sinon from 'sinon';
import { RateLimiterStack, RollingRateLimiter, StoreError, TimeoutError, type RollingRateLimiterOptions } from '../../src/index.js';
import { controlledClient, type ControlledClient } from '../support/controlled-client.js';
import { uniqueNamespaces } from '../support/namespaces.js';

/** A store that hangs (every call times out) until `healthy` is set, and counts the calls it gets. */
interface ControlledStore {
  calls(): number;
  setHealthy(healthy: boolean): void;
}

/** Settles `promise` while fake time runs, returning how many fake ms it took. */
async function timed<T>(clock: sinon.SinonFakeTimers, promise: Promise<T>): Promise<{ value: unknown; ms: number }> {
  const started = clock.now;
  let done = false;
  const settled = promise
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ value: error }),
    )
    .finally(() => (done = true));
  await clock.tickAsync(0);
  while (!done) await clock.tickAsync(1);
  return { ...(await settled), ms: clock.now - started };
}

describe('the circuit breaker in limiters and stacks', () => {
  let clock: sinon.SinonFakeTimers;
  let redis: ControlledClient;
  const namespaces = uniqueNamespaces('breaker');
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_700_000_000_000 });
    redis = controlledClient();
    redis.respond('hang');
  });
  afterEach(() => {
    redis.close();
    clock.restore();
    sinon.restore();
  });

  /** A limiter on the controlled Redis client, which hangs until told otherwise. */
  const limiterOn = (options: Omit<RollingRateLimiterOptions, 'client' | 'namespace'>): RollingRateLimiter =>
    // redis-mock behind the controlled client cannot run scripts: the MULTI path.
    new RollingRateLimiter({ useScript: false, ...options, client: redis.client, namespace: namespaces.next() });
  /** The limiters' store: each decision is one call to the client. */
  const controlStore = (): ControlledStore => ({
    calls: () => redis.calls.length,
    setHealthy: (healthy) => redis.respond(healthy ? 'serve' : 'hang'),
  });

  it("opens after failureThreshold timeouts; then calls are decided at once by 'allow', marked circuit-open", async () => {
    const limiter = limiterOn({
      interval: 1000,
      maxInInterval: 5,
      timeout: 50,
      onStoreError: 'allow',
      circuitBreaker: { failureThreshold: 3, cooldownMs: 1000 },
    });
    const store = controlStore();
    for (let i = 0; i < 3; i += 1) {
      const { value, ms } = await timed(clock, limiter.limitWithInfo('u'));
      expect(ms).to.equal(50);
      expect((value as { storeFailure?: { error: Error } }).storeFailure?.error).to.be.instanceOf(TimeoutError);
    }
    const { value, ms } = await timed(clock, limiter.limitWithInfo('u'));
    expect(ms, 'no wait for the timeout').to.equal(0);
    expect(value).to.include({ blocked: false });
    expect((value as { storeFailure: { error: StoreError } }).storeFailure.error.code).to.equal('CIRCUIT_OPEN');
    expect(store.calls(), 'the store was not called while open').to.equal(3);
  });

  it("rejects at once with a circuit-open StoreError under 'throw'", async () => {
    const limiter = limiterOn({ interval: 1000, maxInInterval: 5, timeout: 50, circuitBreaker: { failureThreshold: 2, cooldownMs: 1000 } });
    controlStore();
    for (let i = 0; i < 2; i += 1) expect((await timed(clock, limiter.limit('u'))).value).to.be.instanceOf(TimeoutError);
    const { value, ms } = await timed(clock, limiter.limit('u'));
    expect(ms).to.equal(0);
    expect(value).to.be.instanceOf(StoreError);
    expect((value as StoreError).code).to.equal('CIRCUIT_OPEN');
  });

  it('lets one call probe after cooldownMs: a failed probe opens it again, a good one closes it', async () => {
    const limiter = limiterOn({
      interval: 1000,
      maxInInterval: 5,
      timeout: 50,
      onStoreError: 'block',
      circuitBreaker: { failureThreshold: 1, cooldownMs: 1000 },
    });
    const store = controlStore();
    await timed(clock, limiter.limit('u')); // opens
    await clock.tickAsync(1000);
    expect((await timed(clock, limiter.limit('u'))).ms, 'the probe waits for the store').to.equal(50);
    expect(store.calls()).to.equal(2);
    expect((await timed(clock, limiter.limit('u'))).ms, 'open again').to.equal(0);
    store.setHealthy(true);
    await clock.tickAsync(1000);
    const probe = await timed(clock, limiter.limitWithInfo('u'));
    expect(probe.value).to.not.have.property('storeFailure');
    const after = await timed(clock, limiter.limitWithInfo('u'));
    expect(after.value).to.not.have.property('storeFailure');
    expect(store.calls(), 'closed: every call goes to the store').to.equal(4);
  });

  it('circuitBreaker: false keeps calling the store, each call waiting its timeout', async () => {
    const limiter = limiterOn({ interval: 1000, maxInInterval: 5, timeout: 50, onStoreError: 'allow', circuitBreaker: false });
    const store = controlStore();
    for (let i = 0; i < 8; i += 1) expect((await timed(clock, limiter.limit('u'))).ms).to.equal(50);
    expect(store.calls()).to.equal(8);
  });

  it('gives a stack a breaker of its own, and refuses bad breaker options naming the field', async () => {
    const tier = limiterOn({ interval: 1000, maxInInterval: 5, timeout: 50, useScript: true });
    const stack = new RateLimiterStack([tier], { onStoreError: 'allow', circuitBreaker: { failureThreshold: 2 } });
    controlStore();
    for (let i = 0; i < 2; i += 1) expect((await timed(clock, stack.limit('u'))).ms).to.equal(50);
    expect((await timed(clock, stack.limit('u'))).ms).to.equal(0);
    expect(() => new RollingRateLimiter({ interval: 1000, maxInInterval: 5, circuitBreaker: { failureThreshold: 0 } })).to.throw(
      RangeError,
      /circuitBreaker\.failureThreshold/,
    );
    expect(() => new RateLimiterStack([tier], { circuitBreaker: 'on' as never })).to.throw(TypeError, /circuitBreaker/);
  });
});
