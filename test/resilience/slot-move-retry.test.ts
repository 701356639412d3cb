// A call refused because its key's hash slot is moving between Cluster masters
// (MOVED, ASK or TRYAGAIN that the client gave up on) is sent again by the
// guarded store until it runs or its timeout passes; one whose timeout passes
// so fails with an error that says so, and never counts against the circuit
// breaker. Fake timers and a fake inner store that refuses on demand; the real
// thing, under load on a real cluster, is test/redis/cluster/resharding.test.ts.

import { expect } from 'chai';
import sinon from 'sinon';
import type { Store, StoreDecision, Tier } from '../../src/core/store.js';
import { StoreError } from '../../src/errors/store-error.js';
import { TimeoutError } from '../../src/errors/timeout-error.js';
import { pauseAfterSlotMove, slotMoveOf } from '../../src/redis/adapters/cluster-redirection.js';
import { circuitBreakerOption } from '../../src/options/circuit-breaker-options.js';
import { GuardedStore } from '../../src/resilience/guarded-store.js';

const TRYAGAIN = 'TRYAGAIN Multiple keys request during rehashing of slot';
const DECISION: StoreDecision = { now: 1, alreadyAdmitted: false, tiers: [] };

/** What each call to the fake store does: refuse with a message, hang, or answer. */
type Answer = { refuse: string } | 'hang' | 'answer';

/** A Cluster store (one whose keys move, unless `keysMove` is false) whose calls answer as `script` says, one entry per call (the last repeats). */
function fakeClusterStore(script: Answer[], keysMove = true) {
  const calls: number[] = [];
  const store: Store = {
    name: 'fake cluster',
    slotMovePause: keysMove ? pauseAfterSlotMove : undefined,
    attempt: () => {
      calls.push(Date.now());
      const answer = script[Math.min(calls.length - 1, script.length - 1)] as Answer;
      if (answer === 'hang') return new Promise<StoreDecision>(() => {});
      if (answer === 'answer') return Promise.resolve(DECISION);
      return Promise.reject(new Error(answer.refuse));
    },
    peek: () => Promise.resolve(DECISION),
    settle: () => Promise.resolve(true),
    clear: () => Promise.resolve(),
    undo: () => Promise.resolve(true),
    sharesKeysWith: () => false,
    canDecideWith: () => false,
    slotOwner: () => '127.0.0.1:7000',
  };
  return { store, calls };
}

const TIERS = [{ key: 'k' } as Tier];

/** The store guarded with `timeoutMs` and a breaker that opens at the first failure. */
function guardedWithBreaker(store: Store, timeoutMs: number): GuardedStore {
  return new GuardedStore(store, {
    timeoutMs,
    circuitBreaker: circuitBreakerOption({ failureThreshold: 1, cooldownMs: 60_000 }),
    onCircuitChange: () => {},
  });
}

/** Settles `promise` while fake time runs; resolves with its value or error and the fake ms it took. */
async function settled<T>(clock: sinon.SinonFakeTimers, promise: Promise<T>): Promise<{ outcome: unknown; ms: number }> {
  const startedAt = clock.now;
  let done = false;
  const outcome = promise.then(
    (value) => value as unknown,
    (error: unknown) => error,
  );
  void outcome.finally(() => (done = true));
  for (let i = 0; i < 100_000 && !done; i++) await clock.tickAsync(1);
  return { outcome: await outcome, ms: clock.now - startedAt };
}

describe('calls refused while their slot moves between Cluster masters', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_700_000_000_000 });
  });
  afterEach(() => clock.restore());

  it('are sent again, after 10 ms doubling to 100 ms, until they run', async () => {
    const { store, calls } = fakeClusterStore([...Array.from({ length: 6 }, () => ({ refuse: TRYAGAIN })), 'answer']);
    const { outcome } = await settled(clock, guardedWithBreaker(store, 2_000).attempt(TIERS, 1));
    expect(outcome).to.equal(DECISION);
    const pauses = calls.slice(1).map((at, i) => at - (calls[i] as number));
    expect(pauses).to.deep.equal([10, 20, 40, 80, 100, 100]);
  });

  it('follow MOVED at once, and the last answer of ioredis giving up on redirections', async () => {
    const { store, calls } = fakeClusterStore([
      { refuse: 'MOVED 1220 127.0.0.1:7001' },
      { refuse: `Too many Cluster redirections. Last error: ReplyError: ${TRYAGAIN}` },
      { refuse: 'Too many Cluster redirections. Last error: ReplyError: ASK 1220 127.0.0.1:7002' },
      'answer',
    ]);
    const { outcome } = await settled(clock, guardedWithBreaker(store, 2_000).attempt(TIERS, 1));
    expect(outcome).to.equal(DECISION);
    expect(calls.map((at) => at - (calls[0] as number))).to.deep.equal([0, 0, 20, 60]);
  });

  it('are not sent again for any other error, CLUSTERDOWN among them (a failing master counts against the breaker)', async () => {
    for (const refusal of ['CLUSTERDOWN The cluster is down', 'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN', 'ERR boom']) {
      const { store, calls } = fakeClusterStore([{ refuse: refusal }, 'answer']);
      const guarded = guardedWithBreaker(store, 2_000);
      const { outcome } = await settled(clock, guarded.attempt(TIERS, 1));
      expect(outcome, refusal).to.be.instanceOf(StoreError);
      expect(calls, refusal).to.have.length(1);
      const next = await settled(clock, guarded.attempt(TIERS, 1));
      expect((next.outcome as StoreError).code, `${refusal}: the breaker opened`).to.equal('CIRCUIT_OPEN');
    }
  });

  it('fail, once refused for their whole timeout, with an error that says the slot kept moving, which does not open the breaker', async () => {
    const { store, calls } = fakeClusterStore([{ refuse: TRYAGAIN }]);
    const guarded = guardedWithBreaker(store, 1_000);
    const { outcome, ms } = await settled(clock, guarded.attempt(TIERS, 1));
    expect(outcome).to.be.instanceOf(StoreError);
    expect((outcome as StoreError).message).to.match(/hash slot was moving between Redis Cluster masters for the whole 1000 ms/);
    expect((outcome as StoreError).message).to.match(/nothing was recorded/);
    expect((outcome as StoreError).cause).to.have.property('message', TRYAGAIN);
    expect(ms).to.be.at.most(1_000);
    const sent = calls.length;
    expect(sent).to.be.within(10, 20);
    await clock.tickAsync(5_000);
    expect(calls, 'nothing sent after the call failed').to.have.length(sent);
    // The breaker, which opens at the first failure, is still closed: the next call reaches the store.
    await settled(clock, guarded.attempt(TIERS, 1));
    expect(calls.length).to.be.above(sent);
  });

  it('fail so too when their timeout passes while a try after a refusal is out: it may yet be recorded', async () => {
    const { store } = fakeClusterStore([{ refuse: TRYAGAIN }, 'hang']);
    const { outcome, ms } = await settled(clock, guardedWithBreaker(store, 1_000).attempt(TIERS, 1));
    expect(ms).to.equal(1_000);
    expect(outcome).to.be.instanceOf(StoreError);
    expect((outcome as StoreError).message).to.match(/the last try was still out, and may yet be recorded/);
  });

  it('time out as any call when no try was refused', async () => {
    const { store } = fakeClusterStore(['hang']);
    const { outcome } = await settled(clock, guardedWithBreaker(store, 1_000).attempt(TIERS, 1));
    expect(outcome).to.be.instanceOf(TimeoutError);
  });

  it('are not sent again by a store whose keys never move (no slotMovePause)', async () => {
    const { store, calls } = fakeClusterStore([{ refuse: TRYAGAIN }, 'answer'], false);
    const { outcome } = await settled(clock, guardedWithBreaker(store, 1_000).attempt(TIERS, 1));
    expect(outcome).to.be.instanceOf(StoreError);
    expect(calls).to.have.length(1);
  });
});

describe("slotMoveOf: the refusals of a moving slot, in each client's words", () => {
  const cases: [string, string, string | undefined][] = [
    ['node-redis, a script', 'ASK 1220 127.0.0.1:7002', 'ask'],
    ['node-redis, a script', 'MOVED 1220 [::1]:7001', 'moved'],
    ['any client', TRYAGAIN, 'retry'],
    ['ioredis and iovalkey', `Too many Cluster redirections. Last error: ReplyError: ${TRYAGAIN}`, 'retry'],
    ['ioredis and iovalkey', 'Too many Cluster redirections. Last error: ReplyError: MOVED 14970 127.0.0.1:7001', 'moved'],
    ['Valkey GLIDE (as the adapter words it)', 'TRYAGAIN Multiple keys request during rehashing of slot', 'retry'],
    ['a failover', 'CLUSTERDOWN The cluster is down', undefined],
    ['ioredis, a failover', 'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down', undefined],
    ['a transaction', 'EXECABORT Transaction discarded because of previous errors.', undefined],
    ['anything else', 'ERR unknown command', undefined],
  ];
  for (const [who, message, kind] of cases) {
    it(`${who}: "${message.slice(0, 60)}" is ${kind ?? 'no move'}`, () => {
      expect(slotMoveOf(new Error(message))?.kind).to.equal(kind);
    });
  }
  it('reads the address a redirection names', () => {
    expect(slotMoveOf(new Error('Too many Cluster redirections. Last error: ReplyError: MOVED 14970 127.0.0.1:7001'))).to.deep.equal({
      kind: 'moved',
      address: '127.0.0.1:7001',
    });
  });
});
