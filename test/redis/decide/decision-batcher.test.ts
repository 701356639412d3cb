// The batcher of `batch: true` with a stubbed adapter: no script call carries
// more than MAX_BATCH_ARGUMENTS keys and arguments (a stack of many tiers is
// split by arguments, not only by decisions), and a client that throws while
// a batch is sent fails that batch's callers alone: nothing escapes as an
// uncaught exception, and the next batches go out as usual.

import { expect } from 'chai';
import sinon from 'sinon';
import type { WindowRule } from '../../../src/core/decision-model.js';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import { DecisionBatcher, MAX_BATCH_ARGUMENTS } from '../../../src/redis/decide/decision-batcher.js';
import { decideBatchWithScript } from '../../../src/redis/script-store.js';
import { callSizeOf, encodeCall, KEY_FIELDS, VERDICT, type ScriptDecision } from '../../../src/redis/decide/decide-codec.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

const rule: WindowRule = { intervalUs: 60_000_000, maxInInterval: 10, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };
const store = new MemoryStore();

/** An attempt for `id` across `tiers` tiers. */
const decisionOf = (id: string, tiers: number): ScriptDecision => ({
  tiers: Array.from({ length: tiers }, (_, i) => ({ key: `tier-${i}:{${id}}`, rule, store })),
  now: 1_800_000_000_000_000,
  dryRun: false,
});

/** An adapter whose script calls do what `evalsha` says, recording each call's count of keys and arguments, and of keys alone. */
function stubAdapter(evalsha: () => Promise<unknown>): { adapter: RedisAdapter; sizes: number[]; keyCounts: number[] } {
  const sizes: number[] = [];
  const keyCounts: number[] = [];
  const adapter: RedisAdapter = {
    client: {},
    kind: 'stub',
    isCluster: false,
    supportsScripts: true,
    transaction: sinon.stub().rejects(new Error('not expected')),
    evalsha: (_sha1, keys, args) => {
      sizes.push(keys.length + args.length);
      keyCounts.push(keys.length);
      return evalsha();
    },
    eval: sinon.stub().rejects(new Error('not expected')),
  };
  return { adapter, sizes, keyCounts };
}

describe('the decision batcher (adapter stubbed)', () => {
  it(`splits 1,024 decisions of a 100-tier stack into calls of at most ${MAX_BATCH_ARGUMENTS} keys and arguments`, async () => {
    const { adapter, sizes, keyCounts } = stubAdapter(() => Promise.reject(new Error('ERR stub')));
    const batcher = new DecisionBatcher(adapter, decideBatchWithScript);
    const outcomes = await Promise.allSettled(Array.from({ length: 1_024 }, (_, i) => batcher.decide(decisionOf(`user-${i}`, 100))));
    expect(
      outcomes.every((outcome) => outcome.status === 'rejected'),
      'every caller answered',
    ).to.equal(true);
    expect(
      keyCounts.reduce((sum, count) => sum + count, 0),
      'every decision sent once',
    ).to.equal(1_024 * 100 * (KEY_FIELDS.length - 1)); // tiers that count actions send no weights
    expect(Math.max(...sizes), 'keys and arguments in the largest call').to.be.at.most(MAX_BATCH_ARGUMENTS);
    expect(Math.min(...sizes), 'no call is needlessly small').to.be.above(MAX_BATCH_ARGUMENTS / 4);
  });

  it('sends a decision larger than the bound alone, and the others around it in batches', async () => {
    const { adapter, sizes } = stubAdapter(() => Promise.reject(new Error('ERR stub')));
    const batcher = new DecisionBatcher(adapter, decideBatchWithScript);
    const perTier = callSizeOf(decisionOf('x', 2)) - callSizeOf(decisionOf('x', 1));
    const huge = decisionOf('c', Math.ceil(MAX_BATCH_ARGUMENTS / perTier)); // more than the bound alone
    const decisions = [decisionOf('a', 1), decisionOf('b', 1), huge, decisionOf('d', 1), decisionOf('e', 1)];
    await Promise.allSettled(decisions.map((decision) => batcher.decide(decision)));
    const sizeOf = (call: ScriptDecision[]): number => ((encoded) => encoded.keys.length + encoded.args.length)(encodeCall(call));
    const pair = sizeOf(decisions.slice(0, 2));
    expect(sizes, 'keys and arguments per call').to.deep.equal([pair, sizeOf([huge]), pair]);
  });

  it('sends what waits behind two stalled batches as one more batch, after a short wait', async () => {
    // The first two calls never come back (a node answering CLUSTERDOWN, retried by the client); the third does.
    let calls = 0;
    const { adapter } = stubAdapter(() => {
      calls += 1;
      // One decision of one tier, admitted: its verdict, then |S| and |S'| (no gap rule, not full afterwards).
      return calls <= 2 ? new Promise<never>(() => undefined) : Promise.resolve([VERDICT.allowed, 0, 1]);
    });
    const batcher = new DecisionBatcher(adapter, decideBatchWithScript);
    void batcher.decide(decisionOf('a', 1));
    await Promise.resolve();
    void batcher.decide(decisionOf('b', 1));
    await Promise.resolve();
    const started = Date.now();
    const third = batcher.decide(decisionOf('c', 1));
    const answered = await Promise.race([third.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 5_000))]);
    expect(answered, 'answered while the first two batches are still out').to.equal(true);
    expect(calls).to.equal(3);
    expect(Date.now() - started, 'ms held back').to.be.below(2_000);
  });

  it('fails the callers of a batch whose sending throws, and sends the next batches as usual', async () => {
    const uncaught = sinon.spy();
    process.on('uncaughtException', uncaught);
    try {
      let throwing = true;
      const { adapter } = stubAdapter(() => {
        if (throwing) throw new RangeError('Maximum call stack size exceeded');
        return Promise.resolve([]);
      });
      const batcher = new DecisionBatcher(adapter, decideBatchWithScript);
      const first = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => batcher.decide(decisionOf(`user-${i}`, 1))));
      const reasons = first.map((outcome): unknown => (outcome.status === 'rejected' ? outcome.reason : outcome.value));
      expect(
        reasons.every((reason) => reason instanceof RangeError),
        'every caller rejected with what the client threw',
      ).to.equal(true);
      throwing = false;
      // Redis answers the next batch (with a reply the decide script could not give): each caller is answered, none hangs.
      const next = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => batcher.decide(decisionOf(`user-${i}`, 1))));
      expect(next.map((outcome) => outcome.status)).to.deep.equal(Array<string>(20).fill('rejected'));
      expect(String((next[0] as PromiseRejectedResult).reason)).to.match(/Unexpected reply/);
      expect(uncaught.callCount, 'uncaught exceptions').to.equal(0);
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });
});
