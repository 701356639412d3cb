// RollingWindowStore's `get` (express-rate-limit's `getKey`) for a key with no
// hit in its window: express-rate-limit's Store contract reads `get` as a
// client's hit count and reset time, and lets a store answer `undefined` only
// when it cannot find the key. Every key of a rolling window has a count, so
// the store answers a zero count, never `undefined` (which made
// `(await limiter.getKey(ip)).totalHits` throw for a client that had not been
// seen, was reset, gave its hit back, or waited out the window). In memory and
// on Redis (ioredis, node-redis), through the store and through express-rate-limit.

import { expect } from 'chai';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import sinon from 'sinon';
import { RollingWindowStore } from '../../src/http/stores/express-rate-limit-store.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { forEachStoreBackend } from './stores/store-backends.js';

const namespaces = uniqueNamespaces('erl-get');
const EMPTY = { totalHits: 0, resetTime: undefined };

forEachStoreBackend('RollingWindowStore.get of a key with an empty window', (backend) => {
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(() => {
    clock?.restore();
    clock = undefined;
  });

  const store = (): RollingWindowStore => {
    const made = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
    made.init({ windowMs: 60_000, limit: 2 });
    return made;
  };

  it('reads a zero count for a key never seen, and after resetKey and resetAll', async () => {
    const erl = store();
    expect(await erl.get('never-seen')).to.deep.equal(EMPTY);
    await erl.increment('a');
    expect(await erl.get('a')).to.include({ totalHits: 1 });
    await erl.resetKey('a');
    expect(await erl.get('a')).to.deep.equal(EMPTY);
    await erl.increment('b');
    await erl.resetAll();
    expect(await erl.get('b')).to.deep.equal(EMPTY);
    await erl.shutdown();
  });

  it('reads a zero count once every hit has left the window', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const erl = store();
    await erl.increment('k');
    clock.tick(60_001); // the hit was stamped within the millisecond it was made: gone a window after it

    expect(await erl.get('k')).to.deep.equal(EMPTY);
    await erl.shutdown();
  });

  it("answers express-rate-limit's getKey with a count for every client", async () => {
    const limiter = rateLimit({
      windowMs: 60_000,
      limit: 2,
      store: new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) }),
    });
    express().use(limiter); // express-rate-limit calls the store's init when the middleware is made
    expect((await limiter.getKey('203.0.113.7'))?.totalHits).to.equal(0);
  });
});
