// The decide script's call layout, end to end: the field the codec encodes
// in each slot is the field the Lua reads there, and each value the Lua
// answers is the one the codec decodes under that name. Two decisions in one
// call (so the second's offsets follow the first's), tiers whose rules differ
// in every field, and what Redis then holds tell the fields apart: a field
// read from another slot than it was written to changes a verdict, a score,
// a member or a TTL below.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Tier } from '../../../src/core/store.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';
import { callSizeOf, decodeReply, encodeCall } from '../../../src/redis/decide/decide-codec.js';
import { DECIDE_SCRIPT, DECISION_HEADER, RULE, TIER_ARGUMENTS, TIER_KEYS, type ScriptDecision } from '../../../src/redis/decide/decide-script.js';
import { luaAppend } from '../../../src/redis/decide/call-layout.js';
import { DRY_RUN_TIER, PACKED_REPLY, type Presence, RECORDED_TIER, REPLY_HEADER, type ReplyValue, unpackReply } from '../../../src/redis/decide/decide-reply.js';
import { RedisStore } from '../../../src/redis/redis-store.js';
import { StoreError } from '../../../src/errors/store-error.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useIORedisClient } from '../../support/ioredis-client.js';

describe('the decide script call layout', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('layout');
  before(() => {
    client = connection.client;
  });

  it('the Lua names the offset of every field of the layout, uses each, and names no field the layout lacks', () => {
    const parts = { header: DECISION_HEADER, keys: TIER_KEYS, tier: TIER_ARGUMENTS, rule: RULE } as const;
    for (const [part, fields] of Object.entries(parts)) {
      const named = [...DECIDE_SCRIPT.lua.matchAll(new RegExp(`\\b${part}_(\\w+)`, 'g'))].map((match) => match[1] as string);
      expect([...new Set(named)].sort(), part).to.deep.equal([...fields.map((field) => field.name), 'width'].sort());
      for (const field of fields) expect(named.filter((name) => name === field.name).length, `${part}_${field.name} declared and read`).to.be.at.least(2);
    }
  });

  it('the Lua answers each reply value by its name in the layout, in order, each that is not always there under the boolean named after when it is', () => {
    // Each part of the reply is appended in place from local variables named as in the layout (Redis refuses a
    // script that reads an undeclared name).
    const unindented = (lua: string): string => lua.replace(/^ +/gm, '');
    // The short path appends a decision's header and its tier in one go, without the values it never has.
    const appended: [readonly ReplyValue[], readonly Presence[], number][] = [
      [REPLY_HEADER, [], 2],
      [RECORDED_TIER, [], 2],
      [DRY_RUN_TIER, [], 1],
      // Once on the short path, and as the start of the whole header's twice.
      [REPLY_HEADER, ['redisClock'], 3],
      [[...REPLY_HEADER, ...RECORDED_TIER], ['redisClock', 'readsNewest'], 1],
    ];
    for (const [part, absent, uses] of appended) {
      const appends = unindented(DECIDE_SCRIPT.lua).split(unindented(luaAppend(part, '', absent))).length - 1;
      expect(appends, `${part.map((value) => value.name).join(', ')} without ${absent.join(', ')}`).to.equal(uses);
    }
    expect(luaAppend([...REPLY_HEADER, ...RECORDED_TIER], '', ['redisClock', 'readsNewest']).split('\n')).to.deep.equal([
      'reply[r + 1], reply[r + 2], reply[r + 3] = verdict, count, countAfter',
      'r = r + 3',
      'if fullAfter then',
      '  reply[r + 1] = maxthAfter',
      '  r = r + 1',
      'end',
    ]);
    expect(luaAppend(RECORDED_TIER).split('\n')).to.deep.equal([
      'reply[r + 1], reply[r + 2] = count, countAfter',
      'r = r + 2',
      'if readsNewest then',
      '  reply[r + 1], reply[r + 2] = newest, newestAfter',
      '  r = r + 2',
      'end',
      'if fullAfter then',
      '  reply[r + 1] = maxthAfter',
      '  r = r + 1',
      'end',
    ]);
  });

  it('packs a reply of up to three small values into one integer, and reads it back', async () => {
    for (const values of [[1, 0, 1], [-1], [0, 9, 9], [2, PACKED_REPLY.largest, 0], []]) {
      let packed = values.length;
      values.forEach((value, i) => (packed += 4 * (value + 1) * 2 ** (PACKED_REPLY.bits * i)));
      expect(Number.isSafeInteger(packed)).to.equal(true);
      expect(unpackReply(packed), String(values)).to.deep.equal(values);
    }
    const store = new RedisStore(new IORedisAdapter(client), 'script');
    const ns = namespaces.next();
    const rule = { intervalUs: 60_000_000, maxInInterval: 10, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 };
    const decisions: ScriptDecision[] = [{ tiers: [{ key: `${ns}:{p}`, rule, store }], now: 1_700_000_000_000_000, dryRun: false }];
    const { keys, args } = encodeCall(decisions);
    const reply: unknown = await client.eval(DECIDE_SCRIPT.lua, keys.length, ...keys, ...args);
    expect(reply, 'verdict, |S| and |S\'| in one integer').to.equal(3 + 4 * (2 + 1 * 2 ** 17 + 2 * 2 ** 34));
    const decoded = [{ dryRun: false, header: { verdict: 1, now: -1 }, tiers: [{ count: 0, newest: -1, countAfter: 1, newestAfter: -1, maxthAfter: -1 }] }];
    expect(decodeReply(decisions, reply)).to.deep.equal(decoded);
    expect(decodeReply(decisions, String(reply)), 'an integer given as text').to.deep.equal(decoded);
    expect(() => decodeReply(decisions, 'OK')).to.throw(StoreError, /Unexpected reply/);
    await client.set(`${ns}:{q}`, 'not a sorted set');
    const failing: ScriptDecision[] = [{ tiers: [{ key: `${ns}:{q}`, rule, store }], now: 1_700_000_000_000_000, dryRun: false }];
    const call = encodeCall(failing);
    const refused: unknown = await client.eval(DECIDE_SCRIPT.lua, call.keys.length, ...call.keys, ...call.args);
    expect(decodeReply(failing, refused)).to.deep.equal([{ dryRun: false, header: { verdict: -1, now: -1 }, tiers: [] }]);
  });

  it('callSizeOf bounds what encodeCall adds for a decision, exactly when its rules are new to the call', () => {
    const store = new RedisStore(new IORedisAdapter(client), 'script');
    const size = (call: { keys: string[]; args: unknown[] }): number => call.keys.length + call.args.length;
    for (let n = 1; n <= 4; n += 1) {
      const tiers = Array.from({ length: n }, (_, i): Tier => ({ key: `k${i}`, rule: { intervalUs: 1 + i, maxInInterval: 1, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 }, store }));
      const decision: ScriptDecision = { tiers, now: 1, dryRun: false, actionId: 'a' };
      // The call's first argument is how many rules it carries.
      expect(size(encodeCall([decision])), `${n} tiers`).to.equal(1 + callSizeOf(decision));
    }
  });

  it("sends a rule once per call, however many of the call's decisions use it", () => {
    const store = new RedisStore(new IORedisAdapter(client), 'script');
    const rule = { intervalUs: 60_000_000, maxInInterval: 10, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 };
    const decisions = ['a', 'b', 'c'].map((id): ScriptDecision => ({ tiers: [{ key: `k:{${id}}`, rule, store }], now: 1, dryRun: false }));
    const { keys, args } = encodeCall(decisions);
    expect(keys).to.have.length(3 * TIER_KEYS.length);
    expect(args).to.have.length(1 + 3 * (DECISION_HEADER.length + TIER_ARGUMENTS.length) + RULE.length);
    expect(args[0], 'rules in the call').to.equal(1);
    expect(args.slice(-RULE.length)).to.deep.equal([60_000_000, 10, 0, '0', 60_000, 60_001]);
  });

  it('carries every field of the header, the tiers and the reply to the slot the other side reads, through real Redis', async () => {
    const store = new RedisStore(new IORedisAdapter(client), 'script');
    const ns = namespaces.next();
    // Every rule field differs between the tiers and from every other field.
    const a: Tier = { key: `${ns}:a:{alice}`, rule: { intervalUs: 7_654_321, maxInInterval: 3, minDifferenceUs: 250_000, countBlocked: true, inFlightUs: 0 }, store };
    const b: Tier = { key: `${ns}:b:{alice}`, rule: { intervalUs: 9_876_543, maxInInterval: 2, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 }, store };
    const c: Tier = { key: `${ns}:c:{bob}`, rule: { intervalUs: 3_333_333, maxInInterval: 1, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 }, store };
    const t0 = 1_700_000_000_123_457;
    const call = async (...decisions: ScriptDecision[]): Promise<ReturnType<typeof decodeReply>> => {
      const { keys, args } = encodeCall(decisions);
      return decodeReply(decisions, await client.eval(DECIDE_SCRIPT.lua, keys.length, ...keys, ...args));
    };
    const held = async (key: string): Promise<string[]> => client.zrange(key, 0, -1, 'WITHSCORES');
    const expectTtl = async (key: string, intervalUs: number): Promise<void> => {
      const ttl = await client.pttl(key);
      expect(ttl, `${key}'s TTL`).to.be.within(Math.ceil(intervalUs / 1000) - 2000, Math.ceil(intervalUs / 1000));
    };

    // Two decisions in one call, the first of two tiers: the second's keys and arguments follow the first's.
    const [first, second] = await call({ tiers: [a, b], now: t0, dryRun: false }, { tiers: [c], now: t0 + 1, dryRun: false });
    const recordedAt = (count: number, newest: number, countAfter: number, newestAfter: number, maxthAfter: number) => ({ count, newest, countAfter, newestAfter, maxthAfter });
    // max(S) and max(S') are read where a gap rule (a) or a max of 1 (c) needs them, and left out elsewhere (b), as is
    // the time the caller gave.
    expect(first).to.deep.equal({ dryRun: false, header: { verdict: 1, now: -1 }, tiers: [recordedAt(0, -1, 1, t0, -1), recordedAt(0, -1, 1, -1, -1)] });
    expect(second).to.deep.equal({ dryRun: false, header: { verdict: 1, now: -1 }, tiers: [recordedAt(0, -1, 1, t0 + 1, t0 + 1)] });
    const [member, score] = (await held(a.key)) as [string, string];
    expect(Number(score)).to.equal(t0);
    expect(member, 'the member recorded is the header member').to.match(/^[0-9a-z]{6,}$/);
    expect(await held(b.key)).to.deep.equal([member, String(t0)]);
    expect((await held(c.key))[1]).to.equal(String(t0 + 1));
    await expectTtl(a.key, a.rule.intervalUs);
    await expectTtl(b.key, b.rule.intervalUs);
    await expectTtl(c.key, c.rule.intervalUs);
    expect(await client.exists(`${a.key}:a`), 'no action id, no companion').to.equal(0);

    // Inside a's gap: blocked, recorded '-job-7' where blocked attempts count (a), nothing where they do not (b).
    const [blocked] = await call({ tiers: [a, b], now: t0 + 100_000, dryRun: false, actionId: 'job-7' });
    expect(blocked).to.deep.equal({
      dryRun: false,
      header: { verdict: 0, now: -1 },
      tiers: [recordedAt(1, t0, 2, t0 + 100_000, -1), recordedAt(1, -1, 1, -1, -1)],
    });
    expect(await held(a.key)).to.deep.equal([member, String(t0), '-job-7', String(t0 + 100_000)]);
    expect(await held(`${a.key}:a`)).to.deep.equal(['-job-7', String(t0 + 100_000)]);
    expect(await held(b.key)).to.deep.equal([member, String(t0)]);

    // Past the gap: admitted, '+job-7' replaces '-job-7'; b is full at max 2 and answers its max-th newest.
    const [admitted] = await call({ tiers: [a, b], now: t0 + 400_000, dryRun: false, actionId: 'job-7' });
    expect(admitted).to.deep.equal({
      dryRun: false,
      header: { verdict: 1, now: -1 },
      tiers: [recordedAt(2, t0 + 100_000, 2, t0 + 400_000, -1), recordedAt(1, -1, 2, -1, t0)],
    });
    expect(await held(a.key)).to.deep.equal([member, String(t0), '+job-7', String(t0 + 400_000)]);
    expect(await held(`${b.key}:a`)).to.deep.equal(['+job-7', String(t0 + 400_000)]);
    await expectTtl(`${a.key}:a`, a.rule.intervalUs + 1000);

    // The same action id again: already admitted, nothing written.
    const [replayed] = await call({ tiers: [a, b], now: t0 + 500_000, dryRun: false, actionId: 'job-7' });
    expect(replayed?.header, 'already admitted').to.deep.equal({ verdict: 2, now: -1 });

    // A dry run writes nothing, and answers the (k-1)-th and k-th newest of each tier; a's gap blocks.
    const before = [await held(a.key), await held(b.key)];
    const [peeked] = await call({ tiers: [a, b], now: t0 + 600_000, dryRun: true });
    expect(peeked).to.deep.equal({
      dryRun: true,
      header: { verdict: 0, now: -1 },
      tiers: [
        { count: 2, newest: t0 + 400_000, kMinus1thNewest: t0, kthNewest: -1 },
        { count: 2, newest: -1, kMinus1thNewest: t0 + 400_000, kthNewest: t0 },
      ],
    });
    expect([await held(a.key), await held(b.key)]).to.deep.equal(before);
  });
});
