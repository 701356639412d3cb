import { expect } from 'chai';
import { decideTiers, describeOutcome, judge, kthNewestAfterInsert, type WindowRule, type WindowSample } from '../../src/core/decision-model.js';

const ms = (value: number): number => value * 1000;

function rule(overrides: Partial<WindowRule> = {}): WindowRule {
  return { intervalUs: ms(1000), maxInInterval: 3, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0, ...overrides };
}

/** The sample of a full list of in-window timestamps (ascending), as a store would report it. */
function sampleOf(timestamps: number[], k: number): WindowSample {
  const n = timestamps.length;
  return {
    count: n,
    newest: timestamps[n - 1],
    kMinus1thNewest: k >= 2 && n >= k - 1 ? timestamps[n - (k - 1)] : undefined,
    kthNewest: n >= k ? timestamps[n - k] : undefined,
  };
}

function decideAt(r: WindowRule, now: number, recorded: number[]) {
  const [tier] = decideTiers([r], now, [sampleOf(recorded, r.maxInInterval)]).tiers;
  if (tier === undefined) throw new Error('no tier');
  return describeOutcome(r, now, tier.verdict, tier.after);
}

describe('decision model (steps 1-7 of docs/semantics.md)', () => {
  const cases: { name: string; rule: Partial<WindowRule>; recorded: number[]; now: number; expected: object }[] = [
    {
      name: 'empty window: allowed, one action used',
      rule: {},
      recorded: [],
      now: ms(5000),
      expected: { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false, actionsRemaining: 2, millisecondsUntilAllowed: 0 },
    },
    {
      name: 'last slot: allowed, then a wait until the oldest leaves',
      rule: {},
      recorded: [ms(4200), ms(4500)],
      now: ms(5000),
      expected: { blocked: false, actionsRemaining: 0, millisecondsUntilAllowed: 200 },
    },
    {
      name: 'window full: blocked by count; the blocked attempt counts, so the wait is from the second oldest',
      rule: {},
      recorded: [ms(4200), ms(4500), ms(4800)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: true, blockedDueToMinDifference: false, actionsRemaining: 0, millisecondsUntilAllowed: 500 },
    },
    {
      name: 'window full, countBlocked false: the wait is from the oldest',
      rule: { countBlocked: false },
      recorded: [ms(4200), ms(4500), ms(4800)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: true, actionsRemaining: 0, millisecondsUntilAllowed: 200 },
    },
    {
      name: 'maxInInterval 1: the one action blocks until it is interval old',
      rule: { maxInInterval: 1, countBlocked: false },
      recorded: [ms(4400)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: true, actionsRemaining: 0, millisecondsUntilAllowed: 400 },
    },
    {
      name: 'maxInInterval 1 allowed: the wait is a whole interval',
      rule: { maxInInterval: 1 },
      recorded: [],
      now: ms(5000),
      expected: { blocked: false, actionsRemaining: 0, millisecondsUntilAllowed: 1000 },
    },
    {
      name: 'gap too short by a microsecond: blocked by the gap',
      rule: { minDifferenceUs: ms(100), countBlocked: false },
      recorded: [ms(5000) - ms(100) + 1],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: false, blockedDueToMinDifference: true, actionsRemaining: 2, millisecondsUntilAllowed: 1 },
    },
    {
      name: 'gap of exactly minDifference: allowed',
      rule: { minDifferenceUs: ms(100) },
      recorded: [ms(4900)],
      now: ms(5000),
      expected: { blocked: false, blockedDueToMinDifference: false, actionsRemaining: 1, millisecondsUntilAllowed: 100 },
    },
    {
      name: 'blocked by both: the longer wait wins (count)',
      rule: { maxInInterval: 2, minDifferenceUs: ms(100), countBlocked: false },
      recorded: [ms(4300), ms(4950)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: true, blockedDueToMinDifference: true, millisecondsUntilAllowed: 300 },
    },
    {
      name: 'blocked by both: the longer wait wins (gap)',
      rule: { maxInInterval: 2, minDifferenceUs: ms(600), countBlocked: false },
      recorded: [ms(4100), ms(4950)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToCount: true, blockedDueToMinDifference: true, millisecondsUntilAllowed: 550 },
    },
    {
      name: 'a sub-millisecond wait is rounded up, never down to 0',
      rule: { maxInInterval: 1, countBlocked: false },
      recorded: [ms(4000) + 1],
      now: ms(5000),
      expected: { blocked: true, millisecondsUntilAllowed: 1 },
    },
    {
      name: 'an attempt stamped before the newest (clock skew) is blocked by the gap',
      rule: { minDifferenceUs: ms(10), countBlocked: false },
      recorded: [ms(5005)],
      now: ms(5000),
      expected: { blocked: true, blockedDueToMinDifference: true, millisecondsUntilAllowed: 15 },
    },
  ];

  for (const testCase of cases) {
    it(testCase.name, () => {
      expect(decideAt(rule(testCase.rule), testCase.now, testCase.recorded)).to.include(testCase.expected);
    });
  }

  it('judge: a count of exactly maxInInterval blocks, one less does not', () => {
    const r = rule({ maxInInterval: 3 });
    expect(judge(r, 0, { count: 3, newest: undefined }).blockedDueToCount).to.equal(true);
    expect(judge(r, 0, { count: 2, newest: undefined }).blockedDueToCount).to.equal(false);
  });

  describe('kthNewestAfterInsert', () => {
    it('agrees with sorting S ∪ {now} on every small case', () => {
      const values = [10, 20, 20, 30];
      for (let n = 0; n <= values.length; n += 1) {
        const S = values.slice(values.length - n);
        for (const now of [5, 10, 15, 20, 25, 30, 35]) {
          for (let k = 1; k <= 5; k += 1) {
            const merged = [...S, now].sort((a, b) => a - b);
            const expected = merged.length >= k ? merged[merged.length - k] : undefined;
            const sample = sampleOf(S, k);
            expect(kthNewestAfterInsert(k, now, n, sample.kMinus1thNewest, sample.kthNewest), `S=${S.join(',')} now=${now} k=${k}`).to.equal(expected);
          }
        }
      }
    });
  });
});
