// Costs (docs/semantics.md, "Costs"), on every store: examples on a
// TestClock, each small enough to check by hand. A limiter with
// `maxCostInInterval` counts cost (each attempt says its `cost`, default 1),
// one with `maxInInterval` counts actions; a stack decides both kinds
// together (requests and tokens per minute, tokens per day). An attempt with
// an action id reserves its cost; `settle` sets it to what was used. Random
// schedules of every operation with costs are in the model tests
// (model-test.ts, stack-model-test.ts).

import { expect } from 'chai';
import { RateLimitedError, RateLimiterStack, UnsupportedError, type RollingRateLimiter } from '../../src/index.js';
import { refused } from '../support/refused.js';
import { TestClock } from '../support/test-clock.js';
import type { ContractOptions, LimiterFactory } from './limiter-contract.js';

export interface CostContractOptions {
  /** Whether the backend's limiters can take the MULTI path (`useScript: false`): it must refuse cost tiers. */
  readonly multiPath?: boolean;
  /** Whether stacks batch their decisions (`batch: true`). */
  readonly batch?: boolean;
  /**
   * How many records the store holds for `id` under `namespace` (on Redis: ZCARD of the id's key). Omitted where they
   * cannot be counted from outside (the in-memory store).
   */
  readonly memberCount?: (namespace: string, id: string) => Promise<number>;
}

/** What `call` rejected with; fails when it resolved (or threw instead of rejecting). */
async function rejection(call: () => Promise<unknown>): Promise<Error> {
  let promise: Promise<unknown>;
  try {
    promise = call();
  } catch (error) {
    throw new Error(`threw synchronously instead of rejecting: ${String(error)}`, { cause: error });
  }
  try {
    const value = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('expected a rejection')) throw error;
    return error as Error;
  }
}

export function describeCostContract(backend: string, factory: () => LimiterFactory, options: CostContractOptions = {}): void {
  describe(`costs on ${backend}`, () => {
    let create: LimiterFactory;
    let clock: TestClock;
    let counter = 0;
    before(() => {
      create = factory();
    });
    beforeEach(() => {
      clock = new TestClock();
    });
    /** A limiter on the test's clock, a minute's window unless told, in its own namespace. */
    const make = (rules: Partial<ContractOptions>): RollingRateLimiter => {
      counter += 1;
      return create({ interval: 60_000, clock: clock.read, namespace: `cost-${counter}`, ...rules });
    };
    const stack = (limiters: readonly RollingRateLimiter[]): RateLimiterStack => new RateLimiterStack(limiters, { batch: options.batch === true });

    describe('deciding by cost', () => {
      it('an RPM and TPM stack decides both tiers together: a call that would overrun the tokens is blocked and records nothing in the requests tier', async () => {
        const rpm = make({ maxInInterval: 3, countBlocked: false });
        const tpm = make({ maxCostInInterval: 1000, countBlocked: false });
        const llm = stack([rpm, tpm]);

        // 600 tokens: 400 remain, so no second call of 600 fits until this one leaves the window in 60 s.
        expect(await llm.limitWithInfo('user', { cost: 600 })).to.deep.equal({
          blocked: false,
          blockedDueToCount: false,
          blockedDueToMinDifference: false,
          actionsRemaining: 0,
          millisecondsUntilAllowed: 60_000,
          costRemaining: 400,
          tiers: [
            {
              blocked: false,
              blockedDueToCount: false,
              blockedDueToMinDifference: false,
              actionsRemaining: 2,
              millisecondsUntilAllowed: 0,
              namespace: rpm.namespace,
              interval: 60_000,
              maxInInterval: 3,
            },
            {
              blocked: false,
              blockedDueToCount: false,
              blockedDueToMinDifference: false,
              actionsRemaining: 0,
              millisecondsUntilAllowed: 60_000,
              costRemaining: 400,
              namespace: tpm.namespace,
              interval: 60_000,
              maxCostInInterval: 1000,
            },
          ],
        });

        clock.advanceMs(1000);
        const overrun = await llm.limitWithInfo('user', { cost: 500 });
        expect(overrun).to.include({ blocked: true, blockedDueToCount: true, costRemaining: 400, millisecondsUntilAllowed: 59_000 });
        expect(overrun.tiers[0]).to.include({ blocked: false, actionsRemaining: 2 });
        expect(overrun.tiers[1]).to.include({ blocked: true, blockedDueToCount: true, costRemaining: 400 });
        // Nothing recorded in either tier: the requests tier still has 2 left (a dry run counts itself: 1).
        expect(await rpm.wouldLimitWithInfo('user')).to.include({ blocked: false, actionsRemaining: 1 });

        // Exactly the rest fits; then not even one token.
        expect(await llm.limitWithInfo('user', { cost: 400 })).to.include({ blocked: false, costRemaining: 0, actionsRemaining: 0 });
        expect(await llm.limitWithInfo('user', { cost: 1 })).to.include({ blocked: true, blockedDueToCount: true, costRemaining: 0 });

        // Requests block on their own: three cheap calls, and the fourth is blocked by the requests tier alone.
        for (let i = 0; i < 3; i += 1) expect(await llm.limit('other', { cost: 10 }), `call ${i}`).to.equal(false);
        const fourth = await llm.limitWithInfo('other', { cost: 10 });
        expect(fourth).to.include({ blocked: true, costRemaining: 970 });
        expect(fourth.tiers.map((tier) => tier.blocked)).to.deep.equal([true, false]);
      });

      it('reports costRemaining, and how many more calls of the same cost fit now; a limiter of actions reports no costRemaining', async () => {
        const limiter = make({ maxCostInInterval: 100 });
        expect(await limiter.limitWithInfo('user', { cost: 30 })).to.deep.equal({
          blocked: false,
          blockedDueToCount: false,
          blockedDueToMinDifference: false,
          actionsRemaining: 2,
          millisecondsUntilAllowed: 0,
          costRemaining: 70,
        });
        // A dry run counts the attempt it describes.
        expect(await limiter.wouldLimitWithInfo('user', { cost: 50 })).to.include({ blocked: false, costRemaining: 20, actionsRemaining: 0 });
        expect(await limiter.limitWithInfo('user', { cost: 1 })).to.include({ blocked: false, costRemaining: 69, actionsRemaining: 69 });
        const actions = make({ maxInInterval: 3 });
        expect(await actions.limitWithInfo('user')).not.to.have.property('costRemaining');
        expect(await stack([actions, make({ maxInInterval: 5 })]).limitWithInfo('user')).not.to.have.property('costRemaining');
      });

      it('waits exactly until enough cost has left the window, to the microsecond', async () => {
        const limiter = make({ interval: 1000, maxCostInInterval: 100, countBlocked: false });
        expect(await limiter.limit('user', { cost: 40 })).to.equal(false);
        clock.advanceMs(100);
        expect(await limiter.limit('user', { cost: 30 })).to.equal(false);
        clock.advanceMs(100);
        expect(await limiter.limit('user', { cost: 20 })).to.equal(false);
        clock.advanceMs(100);
        // 90 in the window: 50 fits once the 40 leaves, 1000 ms after it, 700 ms from now.
        expect(await limiter.limitWithInfo('user', { cost: 50 })).to.deep.equal({
          blocked: true,
          blockedDueToCount: true,
          blockedDueToMinDifference: false,
          actionsRemaining: 0,
          millisecondsUntilAllowed: 700,
          costRemaining: 10,
        });
        // 10 fits now, and no more.
        expect(await limiter.wouldLimitWithInfo('user', { cost: 10 })).to.include({ blocked: false, costRemaining: 0, millisecondsUntilAllowed: 700 });
        expect(await limiter.wouldLimit('user', { cost: 11 })).to.equal(true);
        clock.advanceUs(700_000 - 1);
        expect(await limiter.wouldLimit('user', { cost: 50 })).to.equal(true);
        clock.advanceUs(1);
        // The next 50 must wait for the 30 and the 20 to leave: 200 ms.
        expect(await limiter.limitWithInfo('user', { cost: 50 })).to.include({ blocked: false, costRemaining: 0, millisecondsUntilAllowed: 200 });
      });

      it('waitUntilAllowed waits for the cost to fit, and gives up past maxWait', async () => {
        const limiter = make({ maxCostInInterval: 100 });
        expect(await limiter.waitUntilAllowed('user', { cost: 100 })).to.include({ blocked: false, costRemaining: 0 });
        const error = await rejection(() => limiter.waitUntilAllowed('user', { cost: 50, maxWait: 10 }));
        expect(error).to.be.instanceOf(RateLimitedError);
        expect((error as RateLimitedError).info).to.include({ blocked: true, millisecondsUntilAllowed: 60_000 });
      });

      it('wrap charges each call its cost: a number, or a function of the call’s arguments', async () => {
        const limiter = make({ maxCostInInterval: 100, countBlocked: false });
        const shout = limiter.wrap((prompt: string) => prompt.toUpperCase(), { id: () => 'user', cost: (prompt: string) => prompt.length * 10 });
        expect(await shout('abcdefg')).to.equal('ABCDEFG');
        const error = await rejection(() => shout('abcd'));
        expect(error).to.be.instanceOf(RateLimitedError);
        expect((error as RateLimitedError).info).to.include({ blocked: true, costRemaining: 30 });
        expect(await shout('abc'), 'exactly the 30 left').to.equal('ABC');
        const flat = limiter.wrap(() => 'ok', { id: () => 'other', cost: 60 });
        expect(await flat()).to.equal('ok');
        expect(await rejection(() => flat())).to.be.instanceOf(RateLimitedError);
      });
    });

    describe('reserve, then settle', () => {
      it('settling below the reservation gives the difference back at once', async () => {
        const limiter = make({ maxCostInInterval: 1000 });
        expect(await limiter.limitWithInfo('user', { actionId: 'call-1', cost: 800 })).to.include({ blocked: false, costRemaining: 200 });
        expect(await limiter.wouldLimit('user', { cost: 300 })).to.equal(true);
        clock.advanceMs(5);
        expect(await limiter.settle('user', 'call-1', 250)).to.equal(true);
        expect(await limiter.limitWithInfo('user', { cost: 300 })).to.include({ blocked: false, costRemaining: 450 });
      });

      it('settling above the reservation records the truth: later calls wait until it has left the window', async () => {
        const limiter = make({ maxCostInInterval: 1000 });
        expect(await limiter.limit('user', { actionId: 'call-1', cost: 100 })).to.equal(false);
        clock.advanceMs(1000);
        expect(await limiter.settle('user', 'call-1', 1000)).to.equal(true);
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.deep.equal({
          blocked: true,
          blockedDueToCount: true,
          blockedDueToMinDifference: false,
          actionsRemaining: 0,
          millisecondsUntilAllowed: 59_000,
          costRemaining: 0,
        });
        clock.advanceUs(59_000_000 - 1);
        expect(await limiter.wouldLimit('user', { cost: 1 })).to.equal(true);
        clock.advanceUs(1);
        expect(await limiter.limitWithInfo('user', { cost: 1000 })).to.include({ blocked: false, costRemaining: 0 });
      });

      it('a settlement above the budget rejects with a RangeError naming it, and changes nothing (one action cannot use more than the whole budget)', async () => {
        const limiter = make({ maxCostInInterval: 1000 });
        expect(await limiter.limit('user', { actionId: 'call-1', cost: 100 })).to.equal(false);
        for (const cost of [1001, 2 ** 53 - 1]) {
          const error = await rejection(() => limiter.settle('user', 'call-1', cost));
          expect(error).to.be.instanceOf(RangeError);
          expect(error.message).to.include('maxCostInInterval').and.to.include(String(cost));
        }
        expect(await limiter.wouldLimitWithInfo('user', { cost: 900 })).to.include({ blocked: false, costRemaining: 0 });
      });

      it('settlements never make one key weigh more than 2^51: the one that would is a RangeError, and every id still decides', async () => {
        const budget = 2 ** 48;
        const limiter = make({ maxCostInInterval: budget });
        // Nine actions admitted at cost 1, each given back at once: then settled up to the budget, one by one.
        for (let i = 0; i < 9; i += 1) {
          expect(await limiter.limit('user', { actionId: `call-${i}`, cost: 1 })).to.equal(false);
          expect(await limiter.settle('user', `call-${i}`, 0)).to.equal(true);
        }
        for (let i = 0; i < 8; i += 1) expect(await limiter.settle('user', `call-${i}`, budget), `settlement ${i}`).to.equal(true);
        const error = await rejection(() => limiter.settle('user', 'call-8', budget));
        expect(error).to.be.instanceOf(RangeError);
        expect(error.message).to.include('2^51');
        // The id is blocked by what it used, exactly, and decides; another id is untouched.
        expect(await limiter.limitWithInfo('user', { cost: 1 })).to.include({ blocked: true, blockedDueToCount: true, costRemaining: 0 });
        expect(await limiter.limitWithInfo('other', { cost: budget })).to.include({ blocked: false, costRemaining: 0 });
        // Giving back brings it under again, exactly: eight budgets less seven leaves one.
        for (let i = 0; i < 7; i += 1) expect(await limiter.settle('user', `call-${i}`, 0)).to.equal(true);
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ blocked: true, costRemaining: 0 });
        // What is left: call-7's budget and the blocked attempt of cost 1 above.
        expect(await limiter.settle('user', 'call-7', budget - 6)).to.equal(true);
        expect(await limiter.limitWithInfo('user', { cost: 5 })).to.include({ blocked: false, costRemaining: 0 });
      });

      it('settling to 0 gives the whole cost back, while the call still counts as a request', async () => {
        const rpm = make({ maxInInterval: 1, countBlocked: false });
        const tpm = make({ maxCostInInterval: 1000, countBlocked: false });
        const llm = stack([rpm, tpm]);
        expect(await llm.limit('user', { actionId: 'call-1', cost: 900 })).to.equal(false);
        expect(await llm.settle('user', 'call-1', 0)).to.equal(true);
        const info = await llm.wouldLimitWithInfo('user', { cost: 1000 });
        // Blocked by the requests tier alone; the tokens tier would take all 1000 (nothing would be recorded: 1000 remain).
        expect(info).to.include({ blocked: true, costRemaining: 1000 });
        expect(info.tiers[0]).to.include({ blocked: true, blockedDueToCount: true });
        expect(info.tiers[1]).to.include({ blocked: false, costRemaining: 1000, actionsRemaining: 1 });
      });

      it('settle resolves false and changes nothing for an action unknown, blocked, undone or out of the window; settling twice to one cost is one settlement', async () => {
        // Its dry runs give no cost: they weigh the limiter's `defaultCost`.
        const limiter = make({ interval: 1000, maxCostInInterval: 100, countBlocked: false, defaultCost: 1 });
        expect(await limiter.settle('user', 'never-seen', 5)).to.equal(false);
        expect(await limiter.limit('user', { actionId: 'a', cost: 60 })).to.equal(false);
        expect(await limiter.limit('user', { actionId: 'b', cost: 60 })).to.equal(true);
        expect(await limiter.settle('user', 'b', 5), 'a blocked action').to.equal(false);
        expect(await limiter.settle('other', 'a', 5), 'another id').to.equal(false);
        expect(await limiter.wouldLimitWithInfo('user')).to.include({ costRemaining: 39 });

        expect(await limiter.settle('user', 'a', 10)).to.equal(true);
        expect(await limiter.wouldLimitWithInfo('user')).to.include({ costRemaining: 89 });
        expect(await limiter.settle('user', 'a', 10), 'the same settlement again').to.equal(true);
        expect(await limiter.wouldLimitWithInfo('user')).to.include({ costRemaining: 89 });

        expect(await limiter.limit('user', { actionId: 'c', cost: 5 })).to.equal(false);
        expect(await limiter.undo('user', 'c')).to.equal(true);
        expect(await limiter.settle('user', 'c', 50), 'an undone action').to.equal(false);
        expect(await limiter.wouldLimitWithInfo('user')).to.include({ costRemaining: 89 });

        // `a` was admitted at 0: it is in the window until 1000 ms (exclusive).
        clock.advanceUs(1_000_000 - 1);
        expect(await limiter.settle('user', 'a', 20)).to.equal(true);
        clock.advanceUs(1);
        expect(await limiter.settle('user', 'a', 30), 'an action that has left the window').to.equal(false);
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ costRemaining: 99 });
      });

      it('settles every cost tier of a stack at once (tokens per minute and per day), each in its own window, and no action tier', async () => {
        const rpm = make({ maxInInterval: 10 });
        const tpm = make({ maxCostInInterval: 1000 });
        const tpd = make({ interval: 86_400_000, maxCostInInterval: 5000 });
        const llm = stack([rpm, tpm, tpd]);
        expect(await llm.limitWithInfo('user', { actionId: 'call-1', cost: 800 })).to.include({ blocked: false, costRemaining: 200 });
        clock.advanceMs(2000);
        expect(await llm.settle('user', 'call-1', 300)).to.equal(true);
        const settled = await llm.wouldLimitWithInfo('user', { cost: 1 });
        expect(settled.costRemaining).to.equal(699);
        expect(settled.tiers.map((tier) => [tier.actionsRemaining, tier.costRemaining])).to.deep.equal([
          [8, undefined],
          [699, 699],
          [4699, 4699],
        ]);

        // A minute later the call has left the minute's window but not the day's: settling reaches the day's tier alone.
        clock.advanceMs(60_000);
        expect(await llm.settle('user', 'call-1', 400)).to.equal(true);
        const later = await llm.wouldLimitWithInfo('user', { cost: 1 });
        expect(later.tiers.map((tier) => tier.costRemaining)).to.deep.equal([undefined, 999, 4599]);

        // Undo gives it back in every tier.
        expect(await llm.undo('user', 'call-1')).to.equal(true);
        expect((await llm.wouldLimitWithInfo('user', { cost: 1 })).tiers.map((tier) => tier.costRemaining)).to.deep.equal([undefined, 999, 4999]);
        expect(await llm.settle('user', 'call-1', 1)).to.equal(false);
      });
    });

    describe('bad costs', () => {
      it('rejects a cost above a cost tier’s maxCostInInterval with a RangeError naming both, and records nothing', async () => {
        const limiter = make({ maxCostInInterval: 100 });
        const error = await rejection(() => limiter.limit('user', { cost: 101 }));
        expect(error).to.be.instanceOf(RangeError);
        expect(error.message).to.include('101').and.to.include('maxCostInInterval').and.to.include('100');
        expect(await rejection(() => limiter.wouldLimitWithInfo('user', { cost: 101 }))).to.be.instanceOf(RangeError);
        const tpd = make({ interval: 86_400_000, maxCostInInterval: 500 });
        const inStack = await rejection(() => stack([make({ maxCostInInterval: 1000 }), tpd]).limitWithInfo('user', { cost: 600 }));
        expect(inStack).to.be.instanceOf(RangeError);
        expect(inStack.message).to.include('600').and.to.include('500');
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ costRemaining: 99 });
        expect(await tpd.wouldLimitWithInfo('user', { cost: 1 })).to.include({ costRemaining: 499 });
      });

      it('rejects any cost, even 1, where nothing counts cost, with a TypeError, and records nothing', async () => {
        const limiter = make({ maxInInterval: 1 });
        const actions = stack([limiter, make({ maxInInterval: 5 })]);
        for (const target of [limiter, actions]) {
          for (const call of [
            () => target.limit('user', { cost: 1 }),
            () => target.limitWithInfo('user', { actionId: 'a', cost: 2 }),
            () => target.wouldLimit('user', { cost: 1 }),
            () => target.wouldLimitWithInfo('user', { cost: 3 }),
          ]) {
            const error = await rejection(call);
            expect(error).to.be.instanceOf(TypeError);
            expect(error.message).to.include('cost');
          }
        }
        expect(await limiter.limit('user')).to.equal(false);
      });

      it('rejects a cost that is not a positive safe integer: a RangeError for a number, a TypeError for anything else, naming it', async () => {
        const limiter = make({ maxCostInInterval: 100 });
        for (const bad of [0, -1, 1.5, NaN, Infinity, 2 ** 53]) {
          const error = await rejection(() => limiter.limit('user', { cost: bad }));
          expect(error, String(bad)).to.be.instanceOf(RangeError);
          expect(error.message, String(bad)).to.include('cost');
        }
        for (const bad of ['5', true, {}]) {
          const error = await rejection(() => limiter.limitWithInfo('user', { cost: bad as never }));
          expect(error, JSON.stringify(bad)).to.be.instanceOf(TypeError);
          expect(error.message, JSON.stringify(bad)).to.include('cost');
        }
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ costRemaining: 99 });
      });

      it('settle rejects where nothing counts cost (TypeError), and a settled cost that is not a safe integer >= 0', async () => {
        const actions = make({ maxInInterval: 2 });
        expect(await actions.limit('user', { actionId: 'a' })).to.equal(false);
        expect(await rejection(() => actions.settle('user', 'a', 1))).to.be.instanceOf(TypeError);
        expect(await rejection(() => stack([actions, make({ maxInInterval: 5 })]).settle('user', 'a', 1))).to.be.instanceOf(TypeError);

        const limiter = make({ maxCostInInterval: 100 });
        expect(await limiter.limit('user', { actionId: 'a', cost: 50 })).to.equal(false);
        for (const bad of [-1, 0.5, NaN, Infinity]) expect(await rejection(() => limiter.settle('user', 'a', bad)), String(bad)).to.be.instanceOf(RangeError);
        for (const bad of ['3', undefined, null])
          expect(await rejection(() => limiter.settle('user', 'a', bad as never)), String(bad)).to.be.instanceOf(TypeError);
        expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ costRemaining: 49 });
      });

      it('a limiter takes exactly one of maxInInterval and maxCostInInterval (TypeError)', () => {
        expect(refused(() => make({ maxInInterval: 5, maxCostInInterval: 100 }))).to.be.instanceOf(TypeError);
        expect(refused(() => create({ interval: 1000, clock: clock.read }))).to.be.instanceOf(TypeError);
      });

      if (options.multiPath === true) {
        it('the MULTI path (`useScript: false`) refuses a cost tier at construction with an UnsupportedError', () => {
          const error = refused(() => make({ maxCostInInterval: 100, useScript: false }));
          expect(error).to.be.instanceOf(UnsupportedError);
          expect(error.message).to.include('maxCostInInterval');
        });
      }
    });

    const { memberCount } = options;
    if (memberCount !== undefined) {
      it('holds records, not cost units: a 200,000-per-minute budget used by calls of 1,000 holds about 200 records per key', async () => {
        const limiter = make({ maxCostInInterval: 200_000 });
        // Three minutes of calls of 1,000, one every 300 ms: exactly the budget, so every one is admitted.
        for (let i = 0; i < 600; i += 1) {
          expect(await limiter.limit('user', { cost: 1000 }), `call ${i}`).to.equal(false);
          clock.advanceMs(300);
        }
        const members = await memberCount(limiter.namespace, 'user');
        // The window's 200, and those kept a little longer for calls still in flight (the 2 s timeout: about 7 more).
        expect(members).to.be.within(200, 215);
      });
    }
  });
}
