import { expect } from 'chai';
import sinon from 'sinon';
import type { WindowRule } from '../../../src/core/decision-model.js';
import { StoreError } from '../../../src/index.js';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import type { RedisCommand } from '../../../src/redis/adapters/client-types.js';
import { attemptWithMulti, peekWithMulti } from '../../../src/redis/multi-store.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import type { Tier } from '../../../src/core/store.js';

const rule: WindowRule = { intervalUs: 60_000_000, maxInInterval: 10, countsCost: false, minDifferenceUs: 3_000_000, countBlocked: true, inFlightUs: 0 };
const now = 1_800_000_000_000_000;

function stubAdapter(replies: unknown[] | Error, supportsScripts = false): { adapter: RedisAdapter; transaction: sinon.SinonStub } {
  const transaction = replies instanceof Error ? sinon.stub().rejects(replies) : sinon.stub().resolves(replies);
  const unused = sinon.stub().rejects(new Error('not expected'));
  return { adapter: { client: {}, kind: 'stub', isCluster: false, supportsScripts, transaction, evalsha: unused, eval: unused }, transaction };
}

const tierOf = (r: WindowRule): Tier => ({ key: 'k', rule: r, store: new MemoryStore() });

describe('the MULTI path (adapter stubbed)', () => {
  // Replies in command order: ZREMRANGEBYSCORE, ZCOUNT, ZREVRANGE 0 0, ZREVRANGE k-2 k-1, ZADD, ZREMRANGEBYRANK, PEXPIRE.
  const replies = (count: number, newest: unknown[], pair: unknown[], added = 1): unknown[] => [0, count, newest, pair, added, 0, 1];

  it("sends the card's MULTI: ZREMRANGEBYSCORE, ZCOUNT, two ZREVRANGEs, ZADD, ZREMRANGEBYRANK and PEXPIRE in ms", async () => {
    const { adapter, transaction } = stubAdapter(replies(0, [], []));
    await attemptWithMulti(adapter, tierOf({ ...rule, inFlightUs: 2_000_000 }), now);
    const commands = transaction.firstCall.args[0] as RedisCommand[];
    expect(commands.map((command) => command[0])).to.deep.equal(['zremrangebyscore', 'zcount', 'zrevrange', 'zrevrange', 'zadd', 'zremrangebyrank', 'pexpire']);
    // Records are kept, uncounted, for the time a call may be in flight; the window counts by score.
    expect(commands[0]).to.deep.equal(['zremrangebyscore', 'k', '-inf', now - 62_000_000]);
    expect(commands[1]).to.deep.equal(['zcount', 'k', `(${now - 60_000_000}`, '+inf']);
    expect(commands[2]).to.deep.equal(['zrevrange', 'k', 0, 0, 'withscores']);
    expect(commands[3]).to.deep.equal(['zrevrange', 'k', 8, 9, 'withscores']);
    expect(commands[4]?.slice(0, 3)).to.deep.equal(['zadd', 'k', now]);
    expect(commands[5]).to.deep.equal(['zremrangebyrank', 'k', 0, -11]);
    expect(commands[6]).to.deep.equal(['pexpire', 'k', 62_000]);
    expect(
      commands.some((command) => command[3] === -1),
      'never a ZRANGE 0 -1',
    ).to.equal(false);
  });

  it("on a client that runs scripts, puts back the action records of the key's companion after the flood bound, before the PEXPIRE", async () => {
    const { adapter, transaction } = stubAdapter([...replies(0, [], []).slice(0, 6), 0, 1, 1], true);
    await attemptWithMulti(adapter, tierOf({ ...rule, inFlightUs: 2_000_000 }), now);
    const commands = transaction.firstCall.args[0] as RedisCommand[];
    expect(commands.slice(5)).to.deep.equal([
      ['zremrangebyrank', 'k', 0, -11],
      ['zremrangebyscore', 'k:a', '-inf', now - 62_000_000],
      ['zunionstore', 'k', 2, 'k', 'k:a', 'aggregate', 'max'],
      ['pexpire', 'k', 62_000],
    ]);
  });

  it('reads the newest k ranks in one ZREVRANGE when maxInInterval is 1 or 2', async () => {
    for (const maxInInterval of [1, 2]) {
      const { adapter, transaction } = stubAdapter([0, 0, [], 1, 0, 1]);
      await attemptWithMulti(adapter, tierOf({ ...rule, maxInInterval }), now);
      const ranges = (transaction.firstCall.args[0] as RedisCommand[]).filter((command) => command[0] === 'zrevrange');
      expect(ranges).to.deep.equal([['zrevrange', 'k', 0, maxInInterval - 1, 'withscores']]);
    }
  });

  it('reads only the (k-1)-th and k-th newest without a gap rule, where nothing reads max(S)', async () => {
    const noGap = { ...rule, minDifferenceUs: 0 };
    const k = noGap.maxInInterval;
    // Replies: ZREMRANGEBYSCORE, ZCARD, ZREVRANGE k-2 k-1, ZADD, ZREMRANGEBYRANK, PEXPIRE.
    const { adapter, transaction } = stubAdapter([0, k, ['b', String(now - 50_000_000), 'c', String(now - 55_000_000)], 1, 0, 1]);
    const [outcome] = (await attemptWithMulti(adapter, tierOf(noGap), now)).tiers;
    const ranges = (transaction.firstCall.args[0] as RedisCommand[]).filter((command) => command[0] === 'zrevrange');
    expect(ranges).to.deep.equal([['zrevrange', 'k', k - 2, k - 1, 'withscores']]);
    expect(outcome?.verdict).to.deep.equal({ blocked: true, blockedDueToCount: true, blockedDueToMinDifference: false });
    expect(outcome?.after.fitsAfter).to.equal(now - 50_000_000);
  });

  it('never reads more than a few members, whatever maxInInterval is', async () => {
    const { adapter, transaction } = stubAdapter(replies(0, [], []));
    await attemptWithMulti(adapter, tierOf({ ...rule, maxInInterval: 10_000 }), now);
    const ranges = (transaction.firstCall.args[0] as RedisCommand[]).filter((command) => command[0] === 'zrevrange');
    for (const [, , start, stop] of ranges) expect(Number(stop) - Number(start)).to.be.at.most(1);
  });

  it('judges on S as read before the write, and describes S with the attempt added', async () => {
    const { adapter } = stubAdapter(replies(1, ['earlier', String(now - 1_000_000)], []));
    const [outcome] = (await attemptWithMulti(adapter, tierOf(rule), now)).tiers;
    expect(outcome?.verdict).to.deep.equal({ blocked: true, blockedDueToCount: false, blockedDueToMinDifference: true });
    expect(outcome?.after).to.deep.equal({ count: 2, newest: now, fitsAfter: undefined });
  });

  it('blocks by count with k recorded, and finds the k-th newest of S with the attempt added', async () => {
    const k = rule.maxInInterval;
    const { adapter } = stubAdapter(replies(k, ['a', String(now - 10_000_000)], ['b', String(now - 50_000_000), 'c', String(now - 55_000_000)]));
    const [outcome] = (await attemptWithMulti(adapter, tierOf(rule), now)).tiers;
    expect(outcome?.verdict).to.deep.equal({ blocked: true, blockedDueToCount: true, blockedDueToMinDifference: false });
    expect(outcome?.after).to.deep.equal({ count: k + 1, newest: now, fitsAfter: now - 50_000_000 });
  });

  it('fails loudly when ZADD did not add the member', async () => {
    const { adapter } = stubAdapter(replies(0, [], [], 0));
    let caught: unknown;
    await attemptWithMulti(adapter, tierOf(rule), now).catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(StoreError);
  });

  it('fails loudly on a reply it cannot read, instead of allowing', async () => {
    const { adapter } = stubAdapter([0, 'OK', [], [], 1, 0, 1]);
    let caught: unknown;
    await attemptWithMulti(adapter, tierOf(rule), now).catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(StoreError);
  });

  it('reads each tier of a dry run at its own offsets, with and without a gap rule', async () => {
    const noGap = { ...rule, minDifferenceUs: 0 };
    // Replies: ZCOUNT and one ZREVRANGE for the first tier (no gap rule), ZCOUNT and two ZREVRANGEs for the second.
    const pair = ['b', String(now - 50_000_000), 'c', String(now - 55_000_000)];
    const { adapter, transaction } = stubAdapter([10, pair, 1, ['a', String(now - 1_000_000)], []]);
    const decision = await peekWithMulti(adapter, [tierOf(noGap), tierOf(rule)], now);
    const names = (transaction.firstCall.args[0] as RedisCommand[]).map((command) => command[0]);
    expect(names).to.deep.equal(['zcount', 'zrevrange', 'zcount', 'zrevrange', 'zrevrange']);
    expect(decision.tiers[0]?.verdict.blockedDueToCount).to.equal(true);
    expect(decision.tiers[1]?.verdict).to.deep.equal({ blocked: true, blockedDueToCount: false, blockedDueToMinDifference: true });
  });

  it('reads without writing in a dry run', async () => {
    const { adapter, transaction } = stubAdapter([0, [], []]);
    await peekWithMulti(adapter, [tierOf(rule)], now);
    const names = (transaction.firstCall.args[0] as RedisCommand[]).map((command) => command[0]);
    expect(names).to.deep.equal(['zcount', 'zrevrange', 'zrevrange']);
  });
});
