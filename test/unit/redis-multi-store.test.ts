import { expect } from 'chai';
import sinon from 'sinon';
import type { WindowRule } from '../../src/decision.js';
import { StoreError } from '../../src/index.js';
import type { RedisAdapter } from '../../src/redis/adapter.js';
import type { RedisCommand } from '../../src/redis/client-types.js';
import { attemptWithMulti, limitWithMulti, peekWithMulti } from '../../src/stores/redis-multi-path.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import type { Tier } from '../../src/stores/store.js';

const rule: WindowRule = { intervalUs: 60_000_000, maxInInterval: 10, minDifferenceUs: 3_000_000, countBlocked: true };
const now = 1_800_000_000_000_000;

function stubAdapter(replies: unknown[] | Error): { adapter: RedisAdapter; transaction: sinon.SinonStub } {
  const transaction = replies instanceof Error ? sinon.stub().rejects(replies) : sinon.stub().resolves(replies);
  const unused = sinon.stub().rejects(new Error('not expected'));
  return { adapter: { client: {}, kind: 'stub', supportsScripts: true, transaction, evalsha: unused, eval: unused }, transaction };
}

const tierOf = (r: WindowRule): Tier => ({ key: 'k', rule: r, store: new MemoryStore() });

describe('the MULTI path (adapter stubbed)', () => {
  it('sends one MULTI of ZREMRANGEBYSCORE, ZADD, ZCARD, two ZRANGEs, ZREMRANGEBYRANK and PEXPIRE in ms', async () => {
    const { adapter, transaction } = stubAdapter([0, 1, 1, ['m', String(now)], [], 0, 1]);
    await attemptWithMulti(adapter, tierOf(rule), now);
    const commands = transaction.firstCall.args[0] as RedisCommand[];
    expect(commands.map((command) => command[0])).to.deep.equal([
      'zremrangebyscore',
      'zadd',
      'zcard',
      'zrevrange',
      'zrevrange',
      'zremrangebyrank',
      'pexpire',
    ]);
    expect(commands[0]).to.deep.equal(['zremrangebyscore', 'k', '-inf', now - 60_000_000]);
    expect(commands[4]).to.deep.equal(['zrevrange', 'k', 9, 9, 'withscores']);
    expect(commands[5]).to.deep.equal(['zremrangebyrank', 'k', 0, -11]);
    expect(commands[6]).to.deep.equal(['pexpire', 'k', 60_000]);
    expect(commands.some((command) => command[3] === -1)).to.equal(false);
  });

  it('never reads more than a few members, whatever maxInInterval is', async () => {
    const { adapter, transaction } = stubAdapter([0, 1, 1, ['m', String(now)], [], 0, 1]);
    await attemptWithMulti(adapter, tierOf({ ...rule, maxInInterval: 10_000 }), now);
    const ranges = (transaction.firstCall.args[0] as RedisCommand[]).filter((command) => command[0] === 'zrevrange');
    for (const [, , start, stop] of ranges) expect(Number(stop) - Number(start)).to.be.at.most(1);
  });

  it('reads the previous action from the two newest, skipping its own member', async () => {
    const { adapter, transaction } = stubAdapter([0, 1, 2, [], [], 0, 1]);
    transaction.callsFake(async (commands: RedisCommand[]) => {
      const member = commands[1]?.[3] as string;
      return [0, 1, 2, [member, String(now), 'earlier', String(now - 1_000_000)], [], 0, 1];
    });
    const [outcome] = (await attemptWithMulti(adapter, tierOf(rule), now)).tiers;
    expect(outcome?.verdict).to.deep.equal({ blocked: true, blockedDueToCount: false, blockedDueToMinDifference: true });
    expect(outcome?.after).to.deep.equal({ count: 2, newest: now, maxthNewest: undefined });
  });

  it('fails loudly when ZADD did not add the member', async () => {
    const { adapter } = stubAdapter([0, 0, 1, [], [], 0, 1]);
    let caught: unknown;
    await attemptWithMulti(adapter, tierOf(rule), now).catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(StoreError);
  });

  it('fails loudly on a reply it cannot read, instead of allowing', async () => {
    const { adapter } = stubAdapter([0, 1, 'OK', [], [], 0, 1]);
    let caught: unknown;
    await attemptWithMulti(adapter, tierOf(rule), now).catch((error: unknown) => (caught = error));
    expect(caught).to.be.instanceOf(StoreError);
  });

  it('reads without writing in a dry run', async () => {
    const { adapter, transaction } = stubAdapter([0, [], []]);
    await peekWithMulti(adapter, [tierOf(rule)], now);
    const names = (transaction.firstCall.args[0] as RedisCommand[]).map((command) => command[0]);
    expect(names).to.deep.equal(['zcount', 'zrevrange', 'zrevrange']);
  });

  describe('limit(), which answers only whether the attempt is blocked', () => {
    const noGap: WindowRule = { ...rule, minDifferenceUs: 0 };

    it('sends one MULTI of four commands: ZADD, ZREVRANGE k k, ZREMRANGEBYRANK and PEXPIRE in ms', async () => {
      const { adapter, transaction } = stubAdapter([1, [], 0, 1]);
      expect(await limitWithMulti(adapter, tierOf(noGap), now)).to.equal(false);
      const commands = transaction.firstCall.args[0] as RedisCommand[];
      expect(commands).to.have.length(4);
      expect(commands[0]?.slice(0, 3)).to.deep.equal(['zadd', 'k', String(now)]);
      expect(commands.slice(1)).to.deep.equal([
        ['zrevrange', 'k', '10', '10', 'withscores'],
        ['zremrangebyrank', 'k', '0', '-11'],
        ['pexpire', 'k', '60000'],
      ]);
    });

    it('spells every argument as a string already, so that node-redis can send the commands as they are', async () => {
      for (const tierRule of [noGap, rule]) {
        const { adapter, transaction } = stubAdapter(tierRule === rule ? [1, [], [], 0, 1] : [1, [], 0, 1]);
        await limitWithMulti(adapter, tierOf(tierRule), now);
        const args = (transaction.firstCall.args[0] as RedisCommand[]).flat();
        expect(args.filter((arg) => typeof arg !== 'string')).to.deep.equal([]);
      }
    });

    it('adds ZREVRANGE 0 1 only with a gap rule', async () => {
      const { adapter, transaction } = stubAdapter([1, [], [], 0, 1]);
      await limitWithMulti(adapter, tierOf(rule), now);
      const names = (transaction.firstCall.args[0] as RedisCommand[]).map((command) => command.slice(0, 4).join(' '));
      expect(names.slice(1)).to.deep.equal(['zrevrange k 10 10', 'zrevrange k 0 1', 'zremrangebyrank k 0 -11', 'pexpire k 60000']);
    });

    it('blocks by count exactly when the (k+1)-th newest, this attempt included, is inside the window', async () => {
      const edge = now - noGap.intervalUs;
      const atEdge = stubAdapter([1, ['old', String(edge)], 0, 1]).adapter;
      expect(await limitWithMulti(atEdge, tierOf(noGap), now), 'a timestamp exactly `interval` old no longer counts').to.equal(false);
      const inside = stubAdapter([1, ['old', String(edge + 1)], 0, 1]).adapter;
      expect(await limitWithMulti(inside, tierOf(noGap), now)).to.equal(true);
    });

    it('judges the gap on the previous action, skipping its own member and anything older than the window', async () => {
      const gapRule: WindowRule = { ...rule, intervalUs: 1_000_000, minDifferenceUs: 5_000_000 };
      const replyWith = (previousScore: number) => async (commands: RedisCommand[]) => {
        const member = commands[0]?.[3] as string;
        return [1, [], [member, String(now), 'earlier', String(previousScore)], 0, 1];
      };
      const recent = stubAdapter([]);
      recent.transaction.callsFake(replyWith(now - 900_000));
      expect(await limitWithMulti(recent.adapter, tierOf(gapRule), now)).to.equal(true);
      const gone = stubAdapter([]);
      gone.transaction.callsFake(replyWith(now - 1_000_000)); // left the window: S is empty, no gap to keep
      expect(await limitWithMulti(gone.adapter, tierOf(gapRule), now)).to.equal(false);
    });

    it('fails loudly when ZADD did not add the member, or on a reply it cannot read', async () => {
      for (const replies of [[0, [], 0, 1], [1, 'OK', 0, 1]]) {
        const { adapter } = stubAdapter(replies);
        expect(await limitWithMulti(adapter, tierOf(noGap), now).catch((error: unknown) => error)).to.be.instanceOf(StoreError);
      }
    });
  });
});
