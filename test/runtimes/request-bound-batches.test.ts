// `batch: true` where the runtime ties I/O to the request that started it
// (Cloudflare's workerd, Vercel's edge runtime): one request's I/O cannot
// settle another request's promises there, so every batch must go from the
// context of the calls in it, and none may wait for a batch of another
// request to come back. Each request is played here by an AsyncLocalStorage
// context of its own (which follows microtasks and promise callbacks as a
// request's context does), and every batch records the context it was sent
// from. edge-snippets.test.ts runs the same in workerd itself.

import { expect } from 'chai';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { WindowRule } from '../../src/core/decision-model.js';
import type { StoreDecision } from '../../src/core/store.js';
import type { RedisAdapter } from '../../src/redis/adapters/adapter.js';
import type { ScriptDecision } from '../../src/redis/decide/decide-codec.js';
import { DecisionBatcher, flushPolicyOf, type FlushPolicy } from '../../src/redis/decide/decision-batcher.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

const rule: WindowRule = { intervalUs: 60_000_000, maxInInterval: 10, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };
const store = new MemoryStore();
const adapter = { client: {}, kind: 'stub', isCluster: false, supportsScripts: true } as unknown as RedisAdapter;

/** An attempt of `request`, for id `id`. */
const decisionOf = (request: string, id: string): ScriptDecision => ({
  tiers: [{ key: `${request}:{${id}}`, rule, store }],
  now: 1_800_000_000_000_000,
  dryRun: false,
});

/** The request whose context the code runs in. */
const requests = new AsyncLocalStorage<string>();

interface Sent {
  /** The request whose context sent the batch. */
  readonly from: string | undefined;
  /** The requests whose decisions it holds. */
  readonly holds: string[];
  /** Answers the batch. */
  readonly answer: () => void;
}

/** A batcher whose batches wait until the test answers them, each recorded with the context it went from. */
function batcherWith(policy: FlushPolicy): { batcher: DecisionBatcher; sent: Sent[] } {
  const sent: Sent[] = [];
  const batcher = new DecisionBatcher(
    adapter,
    (_redis, decisions) =>
      new Promise<(StoreDecision | Error)[]>((resolve) => {
        const answer = (): void => resolve(decisions.map((decision) => ({ now: decision.now ?? 0, alreadyAdmitted: false, tiers: [] })));
        sent.push({ from: requests.getStore(), holds: decisions.map((decision) => (decision.tiers[0]?.key ?? '').split(':')[0] ?? ''), answer });
      }),
    policy,
  );
  return { batcher, sent };
}

/** Runs three requests, each in a turn of its own and its own context, each asking for two decisions at once; resolves with their answers. */
async function threeRequests(batcher: DecisionBatcher): Promise<{ answered: Promise<string[]> }> {
  const answers: Promise<string>[] = [];
  for (const request of ['r1', 'r2', 'r3']) {
    answers.push(
      requests.run(request, () =>
        Promise.all([batcher.decide(decisionOf(request, 'a')), batcher.decide(decisionOf(request, 'b'))]).then(() => requests.getStore() ?? 'none'),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { answered: Promise.all(answers) };
}

describe('batch: true where I/O is tied to a request (the batcher’s each-turn flush policy)', () => {
  it('is the policy in workerd (navigator.userAgent) and Vercel’s edge runtime (EdgeRuntime), and nowhere else', () => {
    expect(flushPolicyOf(globalThis), 'Node.js').to.equal('overlap');
    expect(flushPolicyOf({}), 'no globals').to.equal('overlap');
    expect(flushPolicyOf({ navigator: { userAgent: 'Cloudflare-Workers' } }), 'workerd').to.equal('each-turn');
    expect(flushPolicyOf({ EdgeRuntime: 'edge-runtime' }), 'the edge runtime').to.equal('each-turn');
    expect(flushPolicyOf({ navigator: { userAgent: 'Deno/2.9.5' } }), 'Deno').to.equal('overlap');
    const throwing = Object.defineProperty({}, 'navigator', {
      get() {
        throw new Error('A Node.js API is used');
      },
    });
    expect(flushPolicyOf(throwing), 'a global that throws').to.equal('overlap');
  });

  it('sends each request’s decisions of one turn as one batch, from that request’s context, even while batches are out', async () => {
    const { batcher, sent } = batcherWith('each-turn');
    const { answered } = await threeRequests(batcher);
    // Nothing has come back, and nothing waits: three batches out, each sent from the context of the calls it holds.
    expect(sent.map(({ from, holds }) => ({ from, holds }))).to.deep.equal(['r1', 'r2', 'r3'].map((request) => ({ from: request, holds: [request, request] })));
    for (const batch of sent) batch.answer();
    expect(await answered, 'each request answered, in its own context').to.deep.equal(['r1', 'r2', 'r3']);
    expect(sent, 'nothing sent when a batch came back').to.have.length(3);
  });

  it('with the overlap policy (Node’s), holds the third request behind two batches out, then sends it from the context of the batch that came back', async () => {
    const { batcher, sent } = batcherWith('overlap');
    const { answered } = await threeRequests(batcher);
    expect(sent.map(({ from, holds }) => ({ from, holds }))).to.deep.equal([
      { from: 'r1', holds: ['r1'] },
      { from: 'r1', holds: ['r1'] },
    ]);
    sent[0]?.answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent[2]?.holds, 'what waited').to.deep.equal(['r2', 'r2', 'r3', 'r3']);
    expect(sent[2]?.from, 'sent from the context whose batch came back').to.equal('r1');
    for (const batch of sent.slice(1)) batch.answer();
    expect(await answered).to.deep.equal(['r1', 'r2', 'r3']);
  });
});
