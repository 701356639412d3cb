// The public API's smoke test under Deno, run by test/runtimes/deno.test.ts in
// a throwaway project where the packed package is installed: the import of
// src/index.js below is rewritten to the package's name there. In memory, on
// an injected microsecond clock, every answer is exact. Throws on the first
// difference; prints one JSON line at the end.

import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { RateLimiterStack, RollingRateLimiter } from '../../../src/index.js';

const START_US = 1_800_000_000_000_000;
let nowUs = START_US;
const clock = (): number => nowUs;
/** Moves the injected clock to `ms` milliseconds after the start. */
const at = (ms: number): void => {
  nowUs = START_US + ms * 1000;
};
const info = (blocked: boolean, count: boolean, gap: boolean, remaining: number, waitMs: number) => ({
  blocked,
  blockedDueToCount: count,
  blockedDueToMinDifference: gap,
  actionsRemaining: remaining,
  millisecondsUntilAllowed: waitMs,
});

const decisions: unknown[] = [];
const onDecision = (message: unknown): void => void decisions.push(message);
subscribe('rolling-window-limiter:decision', onDecision);

// 2 per second, at least 100 ms apart; blocked attempts count (the default).
const limiter = new RollingRateLimiter({ interval: '1s', maxInInterval: 2, minDifference: '100ms', clock });
at(0);
assert.deepEqual(await limiter.limitWithInfo('user'), info(false, false, false, 1, 100));
at(50);
assert.deepEqual(await limiter.wouldLimitWithInfo('user'), info(true, false, true, 0, 950), 'a dry run counts the attempt it describes');
assert.equal(await limiter.wouldLimit('user'), true);
at(100);
assert.equal(await limiter.limit('user', { actionId: 'send-1' }), false, 'a gap of exactly minDifference is allowed');
assert.deepEqual(await limiter.limitWithInfo('user', { actionId: 'send-1' }), { ...info(false, false, false, 0, 900), alreadyAdmitted: true });
at(150);
assert.deepEqual(await limiter.limitWithInfo('user'), info(true, true, true, 0, 950), 'the window is full and the gap too short');
assert.equal(await limiter.undo('user', 'send-1'), true, 'an admitted action is given back');
assert.equal(await limiter.undo('user', 'send-1'), false, 'once');
at(1000);
assert.deepEqual(
  await limiter.wouldLimitWithInfo('user'),
  info(false, false, false, 0, 150),
  'the attempt at 0 ms has left the window; the blocked one at 150 ms counts',
);
at(1100);
assert.deepEqual(await limiter.limitWithInfo('user'), info(false, false, false, 0, 100));
await limiter.clear('user');
assert.deepEqual(await limiter.wouldLimitWithInfo('user'), info(false, false, false, 1, 100), 'clear forgets the id');

// A stack: 2 per minute and 1 per 3 s, in memory, on the same clock.
const perMinute = new RollingRateLimiter({ namespace: 'minute', interval: '1m', maxInInterval: 2, countBlocked: false, clock });
const every3s = new RollingRateLimiter({ namespace: '3s', interval: '3s', maxInInterval: 1, countBlocked: false, clock });
const stack = new RateLimiterStack([perMinute, every3s]);
at(0);
const first = await stack.limitWithInfo('teacher');
assert.deepEqual([first.blocked, first.millisecondsUntilAllowed, first.tiers.map((tier) => tier.actionsRemaining)], [false, 3000, [1, 0]]);
at(1000);
assert.equal(await stack.limit('teacher'), true, 'the 3 s tier blocks');
at(3000);
assert.equal(await stack.limit('teacher'), false);
at(6000);
const third = await stack.limitWithInfo('teacher');
assert.deepEqual(
  [third.blocked, third.blockedDueToCount, third.millisecondsUntilAllowed],
  [true, true, 54_000],
  'the minute tier is full until a minute after the first',
);
assert.equal(await perMinute.wouldLimit('teacher'), true, 'a tier alone sees the stack’s records');

unsubscribe('rolling-window-limiter:decision', onDecision);
assert.equal(decisions.length, 14, 'each of the 14 decisions was published on node:diagnostics_channel');
const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;
const library = import.meta.resolve('../../../src/index.js');
console.log(JSON.stringify({ runtime: deno === undefined ? `node ${process.version}` : `deno ${deno.version.deno}`, library, decisions: decisions.length }));
