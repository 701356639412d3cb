// Give-backs of RollingWindowStore (express-rate-limit's `decrement`, for
// `skipFailedRequests` and `skipSuccessfulRequests`) under concurrency, in
// memory and on a real Redis (ioredis, node-redis). Each simulated request
// does what express-rate-limit's middleware does with the store: it counts
// itself (`increment`) in its own async context, is admitted when the count
// is within the limit, and later gives its hit back (`decrement`) in that same
// context when its response is one the option skips. A give-back must free
// exactly its own request's hit: blocked requests that arrive together and
// then give themselves back must never free an admitted request's slot.
// Under it, the hit log itself (on an injected clock): whatever hits are
// given back, in whatever order, an admitted hit never finds more than
// `limit` admitted hits, not given back, in its window; and with no
// give-back, every count is the exact one.

import { expect } from 'chai';
import fc from 'fast-check';
import { createHitLog } from '../../../src/http/stores/hit-log/create-hit-log.js';
import type { HitRule } from '../../../src/http/stores/hit-log/hit-log.js';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('give-back');
const WINDOW_MS = 60_000;

/** One request as express-rate-limit handles it, held between its count and its give-back until `finish` is called. */
interface HeldRequest {
  /** Whether the count admitted it (`totalHits <= limit`). */
  readonly admitted: Promise<boolean>;
  /** Ends the request: gives its hit back when `giveBack` says so for its outcome; resolves once given back. */
  finish(giveBack: (admitted: boolean) => boolean): Promise<void>;
}

/** Starts one request in an async context of its own (as each HTTP request has), counted at once, given back on `finish`. */
function startRequest(store: RollingWindowStore, key: string, limit: number): HeldRequest {
  let finish!: (giveBack: (admitted: boolean) => boolean) => void;
  const finished = new Promise<(admitted: boolean) => boolean>((resolve) => (finish = resolve));
  let done!: Promise<void>;
  const admitted = new Promise<boolean>((resolveAdmitted, reject) => {
    setImmediate(() => {
      done = (async () => {
        const { totalHits } = await store.increment(key);
        resolveAdmitted(totalHits <= limit);
        const giveBack = await finished;
        if (giveBack(totalHits <= limit)) await store.decrement(key);
      })();
      done.catch(reject);
    });
  });
  return {
    admitted,
    async finish(giveBack) {
      await admitted;
      finish(giveBack);
      await done;
    },
  };
}

/** A step of the property: a hit after `advanceUs`, or the give-back of the `nth` newest hit recorded so far (0: the newest). */
type Step = { readonly kind: 'hit'; readonly advanceUs: number } | { readonly kind: 'give back'; readonly nth: number };

/** Bursts (hits in the same microsecond, as concurrent requests nearly are) and give-backs, mostly of recent hits. */
const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof<fc.Arbitrary<Step>[]>(
    fc.record({
      kind: fc.constant('hit' as const),
      advanceUs: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 400_000 }), weight: 1 }),
    }),
    fc.record({ kind: fc.constant('give back' as const), nth: fc.oneof(fc.nat(6), fc.nat(60)) }),
  ),
  { minLength: 1, maxLength: 60 },
);

forEachStoreBackend('RollingWindowStore and its hit log under give-backs', (backend) => {
  function store(limit: number, skip: { skipFailedRequests?: boolean; skipSuccessfulRequests?: boolean }): RollingWindowStore {
    const made = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
    made.init({ windowMs: WINDOW_MS, limit, ...skip });
    return made;
  }

  it('skipFailedRequests: blocked requests that arrive together and give themselves back free no admitted slot (2 admitted of 21 at limit 2)', async () => {
    const limit = 2;
    const erl = store(limit, { skipFailedRequests: true });
    let admitted = 0;
    for (let round = 0; round < 3; round += 1) {
      // Two requests in a row that succeed (never given back), when the window has room...
      for (let i = 0; i < 2; i += 1) {
        const request = startRequest(erl, 'ip', limit);
        if (await request.admitted) admitted += 1;
        await request.finish((ok) => !ok);
      }
      // ...then five that arrive together, all counted before any of them answers: refused (429), so given back.
      const burst = Array.from({ length: 5 }, () => startRequest(erl, 'ip', limit));
      const verdicts = await Promise.all(burst.map((request) => request.admitted));
      admitted += verdicts.filter(Boolean).length;
      await Promise.all(burst.map((request) => request.finish((ok) => !ok)));
    }
    expect(admitted, 'admitted in one 60 s window at limit 2').to.equal(limit);
    expect((await erl.get('ip'))?.totalHits, 'the two admitted hits are all the key counts').to.equal(2);
  });

  it('skipFailedRequests: a failed admitted request frees its own slot, and only that one', async () => {
    const limit = 3;
    const erl = store(limit, { skipFailedRequests: true });
    const first = startRequest(erl, 'ip', limit);
    const second = startRequest(erl, 'ip', limit);
    const third = startRequest(erl, 'ip', limit);
    expect(await Promise.all([first.admitted, second.admitted, third.admitted])).to.deep.equal([true, true, true]);
    const burst = Array.from({ length: 8 }, () => startRequest(erl, 'ip', limit));
    expect((await Promise.all(burst.map((request) => request.admitted))).filter(Boolean)).to.have.length(0);
    // The second request fails (a 500): given back. The refused ones are given back too, in any order.
    await Promise.all([second.finish(() => true), ...burst.reverse().map((request) => request.finish(() => true))]);
    await Promise.all([first.finish(() => false), third.finish(() => false)]);
    expect((await erl.get('ip'))?.totalHits, 'the first and the third still count').to.equal(2);
    const next = startRequest(erl, 'ip', limit);
    expect(await next.admitted, "one slot, the second request's").to.equal(true);
    await next.finish(() => false);
    const over = startRequest(erl, 'ip', limit);
    expect(await over.admitted).to.equal(false);
    await over.finish(() => false);
  });

  it('skipSuccessfulRequests: successes give themselves back, refused requests keep counting', async () => {
    const limit = 2;
    const erl = store(limit, { skipSuccessfulRequests: true });
    // Two failures (a 400 each) fill the window; they are not given back.
    for (let i = 0; i < 2; i += 1) {
      const request = startRequest(erl, 'ip', limit);
      expect(await request.admitted).to.equal(true);
      await request.finish(() => false);
    }
    const burst = Array.from({ length: 6 }, () => startRequest(erl, 'ip', limit));
    expect((await Promise.all(burst.map((request) => request.admitted))).filter(Boolean)).to.have.length(0);
    await Promise.all(burst.map((request) => request.finish(() => false))); // a 429 is not a success: kept
    expect((await erl.get('ip'))?.totalHits).to.equal(3);
    const later = startRequest(erl, 'ip', limit);
    expect(await later.admitted, 'still refused').to.equal(false);
    await later.finish(() => false);
  });

  it('never lets an admitted hit find more than limit admitted hits not given back in its window; counts exactly without give-backs', async function () {
    this.timeout(60_000);
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 0, max: 4 }), async (schedule, limit) => {
        const clock = { now: 1_700_000_000_000_000 };
        const log = createHitLog(backend.client(), () => clock.now);
        const key = namespaces.next(`${backend.name}-log`);
        const rule: HitRule = { windowUs: 1_000_000, limit };
        const recorded: { readonly at: number; readonly member: string; readonly admitted: boolean; givenBack: boolean }[] = [];
        const givesBack = schedule.some((step) => step.kind === 'give back');
        for (const step of schedule) {
          if (step.kind === 'give back') {
            const hit = recorded[recorded.length - 1 - (step.nth % Math.max(1, recorded.length))];
            if (hit !== undefined) {
              await log.remove(key, hit.member);
              hit.givenBack = true;
            }
            continue;
          }
          clock.now += step.advanceUs;
          const inWindow = recorded.filter((hit) => hit.at > clock.now - rule.windowUs);
          const { count, member } = await log.hit(key, rule);
          const admitted = count <= limit;
          recorded.push({ at: clock.now, member, admitted, givenBack: false });
          const counted = inWindow.filter((hit) => hit.admitted && !hit.givenBack).length;
          if (admitted) expect(counted + 1, 'admitted hits not given back in the window, this one included').to.be.at.most(limit);
          if (!givesBack) expect(count, 'the exact count').to.equal(Math.min(inWindow.length + 1, limit + 1));
        }
      }),
      { numRuns: backend.name === 'memory' ? 500 : 200 },
    );
  });
});
