// Every script the library sends on a real Redis: each loads under the SHA1
// pinned beside it (a change to a script's text is a deliberate change of its
// name on every server, and of that line); and a store that runs scripts
// makes `undo`, `clear` and every dry run one EVALSHA each, falling back to
// EVAL after a SCRIPT FLUSH, never a MULTI, while `useScript: false` keeps
// its MULTIs.

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter } from '../../src/index.js';
import { HIT_LOG_SCRIPT } from '../../src/http/stores/hit-log/hit-log-script.js';
import { DECIDE_SCRIPT } from '../../src/redis/decide/decide-script.js';
import { ATOMIC_BLOCK_SCRIPT } from '../../src/redis/scripts/atomic-block-script.js';
import { CLEAR_SCRIPT } from '../../src/redis/scripts/clear-script.js';
import type { RedisScript } from '../../src/redis/scripts/redis-script.js';
import { SETTLE_SCRIPT } from '../../src/redis/scripts/settle-script.js';
import { UNDO_SCRIPT } from '../../src/redis/scripts/undo-script.js';
import { commandsDuring } from '../support/command-stats.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { TestClock } from '../support/test-clock.js';

/** Every script the library sends: the store's (src/redis/scripts/), the decide script and the hit log's. */
const SCRIPTS: readonly RedisScript[] = [DECIDE_SCRIPT, CLEAR_SCRIPT, UNDO_SCRIPT, SETTLE_SCRIPT, ATOMIC_BLOCK_SCRIPT, HIT_LOG_SCRIPT];

describe('the store scripts on a real Redis', () => {
  const redis = useIORedisClient();
  const namespaces = uniqueNamespaces('store-scripts');

  for (const script of SCRIPTS) {
    it(`${script.name}: loads under the SHA1 pinned beside it`, async () => {
      expect(script.sha1).to.match(/^[0-9a-f]{40}$/);
      expect(await redis.client.script('LOAD', script.lua)).to.equal(script.sha1);
    });
  }

  it('undo and clear: one EVALSHA each (EVAL once after a SCRIPT FLUSH), never a MULTI, across the tiers of a stack', async () => {
    const clock = new TestClock();
    const tier = (suffix: string, maxInInterval: number): RollingRateLimiter =>
      new RollingRateLimiter({ client: redis.client, namespace: namespaces.next(suffix), interval: 60_000, maxInInterval, clock: clock.read });
    const stack = new RateLimiterStack([tier('minute', 2), tier('hour', 5)]);
    expect((await stack.limitWithInfo('user', { actionId: 'a' })).blocked).to.equal(false);
    clock.advanceMs(1);
    expect((await stack.limitWithInfo('user', { actionId: 'b' })).blocked).to.equal(false);
    const counts = await commandsDuring(redis.client, async () => {
      await redis.client.script('FLUSH');
      expect(await stack.undo('user', 'a'), 'a undone').to.equal(true);
      expect(await stack.undo('user', 'a'), 'a undone once').to.equal(false);
      expect(await stack.undo('user', 'never'), 'an action never admitted').to.equal(false);
      expect((await stack.wouldLimitWithInfo('user')).blocked, 'a gave its slot back').to.equal(false);
      await stack.clear('user');
      await redis.client.script('FLUSH');
      await stack.clear('user');
      expect((await stack.wouldLimitWithInfo('user')).actionsRemaining, 'cleared: the dry run’s own attempt takes one').to.equal(1);
    });
    // undo 3, dry runs 2, clear 2; and an EVAL for the first call of each script after a flush: undo, decide and
    // clear after the first, clear and decide after the second.
    expect(counts).to.deep.equal({ evalsha: 7, eval: 5, multi: 0 });
  });

  it('a dry run on the caller’s clock is one EVALSHA of the decide script, not a MULTI', async () => {
    const limiter = new RollingRateLimiter({ client: redis.client, namespace: namespaces.next(), interval: 1_000, maxInInterval: 3, minDifference: 100 });
    await limiter.limit('user');
    const counts = await commandsDuring(redis.client, async () => {
      expect(await limiter.wouldLimit('user')).to.equal(true);
      expect((await limiter.wouldLimitWithInfo('user')).blockedDueToMinDifference).to.equal(true);
    });
    expect(counts).to.deep.equal({ evalsha: 2, eval: 0, multi: 0 });
  });

  it('useScript: false keeps a MULTI for each dry run, undo and clear', async () => {
    const limiter = new RollingRateLimiter({ client: redis.client, namespace: namespaces.next(), interval: 1_000, maxInInterval: 3, useScript: false });
    await limiter.limit('user');
    const counts = await commandsDuring(redis.client, async () => {
      expect(await limiter.wouldLimit('user')).to.equal(false);
      expect(await limiter.undo('user', 'a')).to.equal(false);
      await limiter.clear('user');
    });
    expect(counts).to.deep.equal({ evalsha: 0, eval: 0, multi: 3 });
  });
});
