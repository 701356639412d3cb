// The decide script's short path (test/support/short-path.ts: one tier, an attempt
// without an action id on the caller's clock, a rule with no gap and a max
// above 1) against its general path, on real Redis: the same calls, the
// second to a copy of the script whose short path is switched off, so that
// the general path decides every decision. Random calls of one to
// four decisions on a few hot ids, mixed with dry runs, action ids and a key
// of another type, must get the same reply, leave the same members and
// scores in every key and companion, and give the same keys a TTL.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { WindowRule } from '../../../src/core/decision-model.js';
import type { Tier } from '../../../src/core/store.js';
import { encodeCall, type ScriptDecision } from '../../../src/redis/decide/decide-codec.js';
import { takesShortPath } from '../../support/short-path.js';
import { DECIDE_SCRIPT } from '../../../src/redis/decide/decide-script.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { SeededRandom } from '../../support/random.js';
import { useIORedisClient } from '../../support/ioredis-client.js';

describe('the decide script: the short path decides as the general path', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('short-path');
  before(async () => {
    client = connection.client;
    await client.script('LOAD', DECIDE_SCRIPT.lua);
  });

  /** The decide script with its short path switched off: the general path decides every decision. */
  const SHORT_PATH =
    "if n == 1 and member ~= '' and actionId == '' and nowText ~= '' and rules[o + rule_gap] == 0 and max > 1 and not (anyCostTier and rules[o + rule_countsCost]) then";
  const generalOnly = DECIDE_SCRIPT.lua.replace(SHORT_PATH, 'if false then');

  it("is taken only by one tier, an attempt without an action id on the caller's clock, with no gap and a max above 1", () => {
    expect(DECIDE_SCRIPT.lua.split(SHORT_PATH), 'the script checks the same, once').to.have.length(2);
    const rule = (minDifferenceUs: number, maxInInterval: number): WindowRule => ({
      intervalUs: 1_000_000,
      maxInInterval,
      countsCost: false,
      minDifferenceUs,
      countBlocked: false,
      inFlightUs: 0,
    });
    const tier = (r: WindowRule): Tier => ({ key: 'k', rule: r }) as unknown as Tier;
    const attempt: ScriptDecision = { tiers: [tier(rule(0, 2))], now: 1, dryRun: false };
    expect(takesShortPath(attempt)).to.equal(true);
    expect(takesShortPath({ ...attempt, dryRun: true }), 'a dry run').to.equal(false);
    expect(takesShortPath({ ...attempt, actionId: 'a' }), 'an action id').to.equal(false);
    expect(takesShortPath({ ...attempt, actionId: 'a', singleUse: true }), 'a single-use action id').to.equal(false);
    expect(takesShortPath({ ...attempt, now: undefined }), "Redis's clock").to.equal(false);
    expect(takesShortPath({ ...attempt, tiers: [tier(rule(0, 2)), tier(rule(0, 3))] }), 'two tiers').to.equal(false);
    expect(takesShortPath({ ...attempt, tiers: [tier(rule(1, 2))] }), 'a gap rule').to.equal(false);
    expect(takesShortPath({ ...attempt, tiers: [tier(rule(0, 1))] }), 'a max of 1').to.equal(false);
  });

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`random calls, seed ${seed}: the same replies, members, scores and TTLs`, async () => {
      const random = new SeededRandom(seed);
      const [short, general] = [namespaces.next('short'), namespaces.next('general')];
      const rule: WindowRule = {
        intervalUs: 60_000_000,
        maxInInterval: random.int(2, 4),
        countsCost: false,
        minDifferenceUs: 0,
        countBlocked: random.chance(0.5),
        inFlightUs: 0,
      };
      const ids = ['a', 'b', 'c', 'wrong'];
      const keyOf = (namespace: string, id: string): string => `${namespace}:{${id}}`;
      for (const namespace of [short, general]) await client.set(keyOf(namespace, 'wrong'), 'not a sorted set');
      let now = 1_700_000_000_000_000;
      let shortDecisions = 0;
      for (let step = 0; step < 120; step += 1) {
        now += random.pick([0, 1_000, 9_000_000, 25_000_000, 70_000_000]);
        const decisions: ScriptDecision[] = Array.from({ length: random.int(1, 4) }, (_, j) => {
          const id = random.chance(0.1) ? 'wrong' : random.pick(ids.slice(0, 3));
          const kind = random.next();
          return {
            tiers: [{ key: keyOf('NS', id), rule } as unknown as Tier],
            now: now + j,
            dryRun: kind < 0.1,
            actionId: kind >= 0.1 && kind < 0.25 ? random.pick(['x', 'y']) : undefined,
          };
        });
        shortDecisions += decisions.filter(takesShortPath).length;
        const { keys, args } = encodeCall(decisions);
        const inNamespace = (namespace: string): string[] => keys.map((key) => key.replace('NS', namespace));
        const replies = [
          await client.evalsha(DECIDE_SCRIPT.sha1, keys.length, ...inNamespace(short), ...args),
          await client.eval(generalOnly, keys.length, ...inNamespace(general), ...args),
        ];
        expect(replies[0], `step ${step}: the reply`).to.deep.equal(replies[1]);
        for (const id of ids.slice(0, 3)) {
          for (const suffix of ['', ':a']) {
            const [inShort, inGeneral] = [keyOf(short, id) + suffix, keyOf(general, id) + suffix];
            expect(await client.zrange(inShort, 0, -1, 'WITHSCORES'), `step ${step}: ${inShort}`).to.deep.equal(
              await client.zrange(inGeneral, 0, -1, 'WITHSCORES'),
            );
            const [ttlShort, ttlGeneral] = [await client.pttl(inShort), await client.pttl(inGeneral)];
            expect(ttlShort > 0, `step ${step}: ${inShort} has a TTL as ${inGeneral} does (${ttlShort}, ${ttlGeneral})`).to.equal(ttlGeneral > 0);
            expect(Math.abs(ttlShort - ttlGeneral), `step ${step}: ${inShort}'s TTL`).to.be.below(1000);
          }
        }
      }
      expect(shortDecisions, 'decisions on the short path').to.be.above(100);
    });
  }
});
