// The decide script's contract with its codec, both ways, without a server:
// the header of the commented source (decide-lua.ts) names every KEYS and
// ARGV field in the codec's order, and its offsets are the codec's places;
// its reply block names each tier kind's values in the order the codec's
// REPLY_FIELDS lists them, and the codec reads a reply in that order. What
// Redis is sent is that source without its comment lines and indentation
// (leanLua), written to decide-script.ts with its SHA1, and every script's
// pinned SHA1 is its text's. (That Redis loads each under it:
// test/redis/store-scripts.test.ts.)

import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { HIT_LOG_SCRIPT } from '../../src/http/stores/hit-log/hit-log-script.js';
import type { Tier } from '../../src/core/store.js';
import type { WindowRule } from '../../src/core/decision-model.js';
import { HEADER_FIELDS, KEY_FIELDS, readOutcomes, REPLY_FIELDS, RULE_FIELDS, TIER_FIELDS, type ScriptDecision } from '../../src/redis/decide/decide-codec.js';
import { DECIDE_LUA } from '../../src/redis/decide/decide-lua.js';
import { DECIDE_SCRIPT } from '../../src/redis/decide/decide-script.js';
import { ATOMIC_BLOCK_SCRIPT } from '../../src/redis/scripts/atomic-block-script.js';
import { CLEAR_SCRIPT } from '../../src/redis/scripts/clear-script.js';
import { leanLua } from '../../src/redis/scripts/lean-lua.js';
import { SETTLE_SCRIPT } from '../../src/redis/scripts/settle-script.js';
import { UNDO_SCRIPT } from '../../src/redis/scripts/undo-script.js';
import { decideScriptModule } from '../../scripts/write-decide-script.js';
import { readFileSync } from 'node:fs';

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** The lines of the source's header from the one that starts with `from` to the one before `to`. */
function headerBlock(from: string, to: string): string[] {
  const lines = DECIDE_LUA.split('\n');
  const start = lines.findIndex((line) => line.startsWith(from));
  const end = lines.findIndex((line, i) => i > start && line.startsWith(to));
  expect(start, from).to.be.at.least(0);
  expect(end, to).to.be.above(start);
  return lines.slice(start, end);
}

describe('the decide script and its codec: one contract', () => {
  it("names the codec's KEYS and ARGV fields in its header and its offsets, in the codec's order", () => {
    const parts = { header: HEADER_FIELDS, keys: KEY_FIELDS, tier: TIER_FIELDS, rule: RULE_FIELDS } as const;
    for (const [part, fields] of Object.entries(parts)) {
      // local header_tiers, header_now, ..., header_width = 1, 2, ..., 4
      const declarations = [...DECIDE_LUA.matchAll(new RegExp(`^local (${part}_\\w+(?:, ${part}_\\w+)*) = ([\\d, ]+)$`, 'gm'))];
      expect(declarations, `the offsets of ${part}, declared once`).to.have.length(1);
      const names = (declarations[0]?.[1] ?? '').split(', ').map((name) => name.slice(part.length + 1));
      const places = (declarations[0]?.[2] ?? '').split(', ').map(Number);
      expect(names, part).to.deep.equal([...fields, 'width']);
      expect(places, `${part}: places 1, 2, ... and the width`).to.deep.equal([...fields.map((_, i) => i + 1), fields.length]);
    }
    // The header lists every field in the same order, each at the start of its line, before the reply's.
    const listed = headerBlock('-- KEYS', '-- Reply:').flatMap((line) => /^-- {3,5}(\w+) {2,}/.exec(line)?.[1] ?? []);
    expect(listed).to.deep.equal([...KEY_FIELDS, ...HEADER_FIELDS, ...TIER_FIELDS, ...RULE_FIELDS]);
  });

  it("names each tier kind's reply values in its header in the order of the codec's REPLY_FIELDS", () => {
    const groups = new Map<string, string[]>();
    let group = 'decision';
    for (const line of headerBlock('-- Reply:', '-- A value that does not exist')) {
      const heading = /^-- {3}(actions|cost), (an attempt or a dry run|an attempt|a dry run):$/.exec(line);
      if (heading !== null) {
        group = `${heading[1]}: ${heading[2]}`;
        groups.set(group, []);
        continue;
      }
      const field = /^-- {3}(\w+) {2,}/.exec(line) ?? /^-- {5}(\w+) {2,}/.exec(line);
      if (field !== null) groups.set(group, [...(groups.get(group) ?? []), field[1] as string]);
    }
    expect(Object.fromEntries(groups)).to.deep.equal({
      decision: REPLY_FIELDS.decision,
      'actions: an attempt': REPLY_FIELDS.actions.attempt,
      'actions: a dry run': REPLY_FIELDS.actions.dryRun,
      'cost: an attempt or a dry run': REPLY_FIELDS.cost.attempt,
    });
    expect(REPLY_FIELDS.cost.dryRun).to.deep.equal(REPLY_FIELDS.cost.attempt);
  });

  it('reads a reply in the order REPLY_FIELDS names, each value where its name says', () => {
    const rule = (max: number, countsCost: boolean, gap = 0): WindowRule => ({
      intervalUs: 1_000_000,
      maxInInterval: max,
      countsCost,
      minDifferenceUs: gap,
      countBlocked: false,
      inFlightUs: 0,
    });
    const tier = (r: WindowRule): Tier => ({ key: 'k', rule: r }) as unknown as Tier;
    const now = 1_000_000_000;
    /** A reply of each tier's named values in the order the codec lists them. */
    const reply = (...parts: [readonly string[], Record<string, number>][]): number[] =>
      parts.flatMap(([fields, values]) => fields.filter((field) => field in values).map((field) => values[field] as number));
    // An attempt on a tier that counts actions (gap and full: every value present) and one that counts cost.
    const attempt: ScriptDecision = { tiers: [tier(rule(2, false, 100)), tier(rule(10, true))], now, dryRun: false, cost: 3 };
    const actions = { count: 1, countAfter: 2, newest: now - 100, newestAfter: now, fitsAfter: now - 100 };
    const cost = { count: 5, countAfter: 8, fitsAfter: now - 50 };
    const [read] = readOutcomes(
      [attempt],
      reply([REPLY_FIELDS.decision, { verdict: 1 }], [REPLY_FIELDS.actions.attempt, actions], [REPLY_FIELDS.cost.attempt, cost]),
    );
    expect(read).to.deep.include({ now, alreadyAdmitted: false });
    expect(read)
      .to.have.nested.property('tiers[0].after')
      .that.deep.equals({ count: 2, newest: now, fitsAfter: now - 100 });
    expect(read)
      .to.have.nested.property('tiers[1].after')
      .that.deep.equals({ count: 8, newest: undefined, fitsAfter: now - 50 });
    // A dry run on a full tier that counts actions: the (k-1)-th and k-th newest, in that order, decide the wait.
    const dryRun: ScriptDecision = { tiers: [tier(rule(2, false))], now, dryRun: true };
    const sample = { count: 2, kMinus1thNewest: now - 100, kthNewest: now - 900_000 };
    const [peeked] = readOutcomes([dryRun], reply([REPLY_FIELDS.decision, { verdict: 0 }], [REPLY_FIELDS.actions.dryRun, sample]));
    // S' = S (blocked, not recorded): the wait runs until the k-th newest leaves the window.
    expect(peeked).to.have.nested.property('tiers[0].after.fitsAfter', now - 900_000);
  });

  it('sends the commented source without its comment lines and indentation, written by npm run build:lua, under its SHA1', () => {
    expect(DECIDE_SCRIPT.lua, 'decide-script.ts is leanLua(DECIDE_LUA): run npm run build:lua').to.equal(leanLua(DECIDE_LUA));
    expect(readFileSync(new URL('../../src/redis/decide/decide-script.ts', import.meta.url), 'utf8')).to.equal(decideScriptModule(DECIDE_SCRIPT.lua));
    expect(DECIDE_SCRIPT.lua).not.to.match(/^\s|^--|\n\s|\n--|\n\n/);
    expect(DECIDE_SCRIPT.lua.length, 'what EVAL sends').to.be.below(DECIDE_LUA.length / 2);
  });

  it('leanLua: drops comment lines, blank lines and indentation, and keeps every other line as it is', () => {
    const lua = "-- a header\n--\nlocal a = '--x' -- kept\n\n  if a then\n    -- why\n    return a\n  end\n";
    expect(leanLua(lua)).to.equal("local a = '--x' -- kept\nif a then\nreturn a\nend\n");
    expect(leanLua('return 1')).to.equal('return 1\n');
  });

  for (const script of [DECIDE_SCRIPT, CLEAR_SCRIPT, UNDO_SCRIPT, SETTLE_SCRIPT, ATOMIC_BLOCK_SCRIPT, HIT_LOG_SCRIPT]) {
    it(`${script.name}: its pinned SHA1 is its text's`, () => {
      expect(script.sha1).to.equal(sha1(script.lua));
    });
  }
});
