// The decide script's call layout, end to end: the field the codec encodes
// in each slot is the field the Lua reads there, and each value the Lua
// answers is the one the codec reads under that name. (That the Lua's header
// names every field in order, and its offsets, as the codec's lists do:
// test/architecture/decide-contract.test.ts, which needs no server.) Two decisions in one call (so the second's
// offsets follow the first's), tiers whose rules differ in every field, and
// what Redis then holds tell the fields apart: a field read from another slot
// than it was written to changes a verdict, a score, a member or a TTL below.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Tier } from '../../../src/core/store.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';
import {
  callSizeOf,
  encodeCall,
  HEADER_FIELDS,
  KEY_FIELDS,
  readOutcomes,
  RULE_FIELDS,
  TIER_FIELDS,
  type ScriptDecision,
} from '../../../src/redis/decide/decide-codec.js';
import { DECIDE_SCRIPT } from '../../../src/redis/decide/decide-script.js';
import { ScriptStore } from '../../../src/redis/script-store.js';
import { StoreError } from '../../../src/errors/store-error.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { RECORDS_FROM } from '../../support/redis-keys.js';

describe('the decide script call layout', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('layout');
  before(() => {
    client = connection.client;
  });

  it('is plain Lua, pinned by its SHA1, which Redis computes alike', async () => {
    expect(DECIDE_SCRIPT.lua).not.to.include('${');
    expect(await client.script('LOAD', DECIDE_SCRIPT.lua)).to.equal(DECIDE_SCRIPT.sha1);
  });

  it('answers an array of integers, which the codec reads into each outcome', async () => {
    const store = new ScriptStore(new IORedisAdapter(client), false);
    const ns = namespaces.next();
    const rule = { intervalUs: 60_000_000, maxInInterval: 10, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 };
    const decisions: ScriptDecision[] = [{ tiers: [{ key: `${ns}:{p}`, rule, store }], now: 1_700_000_000_000_000, dryRun: false }];
    const { keys, args } = encodeCall(decisions);
    const reply: unknown = await client.eval(DECIDE_SCRIPT.lua, keys.length, ...keys, ...args);
    expect(reply, "verdict, |S| and |S'|").to.deep.equal([1, 0, 1]);
    const outcome = {
      now: 1_700_000_000_000_000,
      alreadyAdmitted: false,
      tiers: [
        {
          verdict: { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false },
          after: { count: 1, newest: undefined, fitsAfter: undefined },
        },
      ],
    };
    expect(readOutcomes(decisions, reply)).to.deep.equal([outcome]);
    expect(readOutcomes(decisions, ['1', '0', '1']), 'integers given as text').to.deep.equal([outcome]);
    expect(() => readOutcomes(decisions, 'OK')).to.throw(StoreError, /Unexpected reply/);
    await client.set(`${ns}:{q}`, 'not a sorted set');
    const failing: ScriptDecision[] = [{ tiers: [{ key: `${ns}:{q}`, rule, store }], now: 1_700_000_000_000_000, dryRun: false }];
    const call = encodeCall(failing);
    const refused: unknown = await client.eval(DECIDE_SCRIPT.lua, call.keys.length, ...call.keys, ...call.args);
    expect(refused).to.deep.equal([-1]);
    expect(readOutcomes(failing, refused)[0])
      .to.be.instanceOf(StoreError)
      .with.property('message')
      .that.matches(/WRONGTYPE/);
  });

  it('callSizeOf bounds what encodeCall adds for a decision, exactly when its rules are new to the call', () => {
    const store = new ScriptStore(new IORedisAdapter(client), false);
    const size = (call: { keys: string[]; args: unknown[] }): number => call.keys.length + call.args.length;
    for (let n = 1; n <= 4; n += 1) {
      const tiers = Array.from({ length: n }, (_, i): Tier => ({
        key: `k${i}`,
        rule: { intervalUs: 1 + i, maxInInterval: 1, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 },
        store,
      }));
      const decision: ScriptDecision = { tiers, now: 1, dryRun: false, actionId: 'a' };
      // The call's first argument is how many rules it carries.
      expect(size(encodeCall([decision])), `${n} tiers`).to.equal(1 + callSizeOf(decision));
    }
  });

  it("sends a rule once per call, however many of the call's decisions use it", () => {
    const store = new ScriptStore(new IORedisAdapter(client), false);
    const rule = { intervalUs: 60_000_000, maxInInterval: 10, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 };
    const decisions = ['a', 'b', 'c'].map((id): ScriptDecision => ({ tiers: [{ key: `k:{${id}}`, rule, store }], now: 1, dryRun: false }));
    const { keys, args } = encodeCall(decisions);
    // A tier that counts actions sends neither weights nor a cost.
    expect(keys).to.have.length(3 * (KEY_FIELDS.length - 1));
    expect(args).to.have.length(1 + 3 * (HEADER_FIELDS.length + TIER_FIELDS.length - 1) + RULE_FIELDS.length);
    expect(args[0], 'rules in the call').to.equal(1);
    expect(args.slice(-RULE_FIELDS.length)).to.deep.equal([60_000_000, 10, 0, '0', 60_000, '0']);
  });

  it('carries every field of the header, the tiers and the reply to the slot the other side reads, through real Redis', async () => {
    const store = new ScriptStore(new IORedisAdapter(client), false);
    const ns = namespaces.next();
    // Every rule field differs between the tiers and from every other field.
    const a: Tier = {
      key: `${ns}:a:{alice}`,
      rule: { intervalUs: 7_654_321, maxInInterval: 3, countsCost: false, minDifferenceUs: 250_000, countBlocked: true, inFlightUs: 0 },
      store,
    };
    const b: Tier = {
      key: `${ns}:b:{alice}`,
      rule: { intervalUs: 9_876_543, maxInInterval: 2, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 },
      store,
    };
    const c: Tier = {
      key: `${ns}:c:{bob}`,
      rule: { intervalUs: 3_333_333, maxInInterval: 1, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 },
      store,
    };
    const t0 = 1_700_000_000_123_457;
    // The reply's values, in the order the script's header names them.
    const call = async (...decisions: ScriptDecision[]): Promise<number[]> => {
      const { keys, args } = encodeCall(decisions);
      return (await client.eval(DECIDE_SCRIPT.lua, keys.length, ...keys, ...args)) as number[];
    };
    // The records of a key, without its horizon mark (below every stamp).
    const held = async (key: string): Promise<string[]> => client.zrangebyscore(key, RECORDS_FROM, '+inf', 'WITHSCORES');
    const expectTtl = async (key: string, intervalUs: number): Promise<void> => {
      const ttl = await client.pttl(key);
      expect(ttl, `${key}'s TTL`).to.be.within(Math.ceil(intervalUs / 1000) - 2000, Math.ceil(intervalUs / 1000));
    };

    // Two decisions in one call, the first of two tiers: the second's keys and arguments follow the first's.
    // Per decision its verdict; per tier count and countAfter, then max(S) and max(S') where a gap rule (a) or a max of
    // 1 (c) needs them, left out elsewhere (b), as is the time the caller gave; the max-th newest once full (c).
    expect(await call({ tiers: [a, b], now: t0, dryRun: false }, { tiers: [c], now: t0 + 1, dryRun: false })).to.deep.equal([
      ...[1, ...[0, 1, -1, t0], ...[0, 1]],
      ...[1, ...[0, 1, -1, t0 + 1, t0 + 1]],
    ]);
    const [member, score] = (await held(a.key)) as [string, string];
    expect(Number(score)).to.equal(t0);
    expect(member, 'the member recorded is the header member').to.match(/^[0-9a-z]{6,}$/);
    expect(await held(b.key)).to.deep.equal([member, String(t0)]);
    expect((await held(c.key))[1]).to.equal(String(t0 + 1));
    await expectTtl(a.key, a.rule.intervalUs);
    await expectTtl(b.key, b.rule.intervalUs);
    await expectTtl(c.key, c.rule.intervalUs);
    // Each key's mark holds its horizon: its rule's ttl, in milliseconds.
    expect(await client.zscore(a.key, '#count')).to.equal(String(Math.ceil(a.rule.intervalUs / 1000)));
    expect(await client.zscore(c.key, '#count')).to.equal(String(Math.ceil(c.rule.intervalUs / 1000)));
    expect(await client.exists(`${a.key}:a`), 'no action id, no companion').to.equal(0);

    // Inside a's gap: blocked, recorded '-job-7' where blocked attempts count (a), nothing where they do not (b).
    expect(await call({ tiers: [a, b], now: t0 + 100_000, dryRun: false, actionId: 'job-7' })).to.deep.equal([0, ...[1, 2, t0, t0 + 100_000], ...[1, 1]]);
    expect(await held(a.key)).to.deep.equal([member, String(t0), '-job-7', String(t0 + 100_000)]);
    expect(await held(`${a.key}:a`)).to.deep.equal(['-job-7', String(t0 + 100_000)]);
    expect(await held(b.key)).to.deep.equal([member, String(t0)]);

    // Past the gap: admitted, '+job-7' replaces '-job-7'; b is full at max 2 and answers its max-th newest.
    expect(await call({ tiers: [a, b], now: t0 + 400_000, dryRun: false, actionId: 'job-7' })).to.deep.equal([
      1,
      ...[2, 2, t0 + 100_000, t0 + 400_000],
      ...[1, 2, t0],
    ]);
    expect(await held(a.key)).to.deep.equal([member, String(t0), '+job-7', String(t0 + 400_000)]);
    expect(await held(`${b.key}:a`)).to.deep.equal(['+job-7', String(t0 + 400_000)]);
    await expectTtl(`${a.key}:a`, a.rule.intervalUs + 1000);

    // The same action id again: already admitted, nothing written.
    const [replayed] = await call({ tiers: [a, b], now: t0 + 500_000, dryRun: false, actionId: 'job-7' });
    expect(replayed, 'already admitted').to.equal(2);

    // A dry run writes nothing, and answers the (k-1)-th and k-th newest of each tier; a's gap blocks.
    const before = [await held(a.key), await held(b.key)];
    // a: count, newest, the (k-1)-th newest (k = 3); b: count, the (k-1)-th and k-th newest (k = 2).
    expect(await call({ tiers: [a, b], now: t0 + 600_000, dryRun: true })).to.deep.equal([0, ...[2, t0 + 400_000, t0], ...[2, t0 + 400_000, t0]]);
    expect([await held(a.key), await held(b.key)]).to.deep.equal(before);
  });
});
