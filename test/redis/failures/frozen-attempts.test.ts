// What a timed-out attempt leaves behind, on a real redis-server frozen with
// SIGSTOP: the attempts were sent before they timed out, so Redis decides and
// records them when it runs again, although every caller was told "blocked"
// ('block') or got an error ('throw') and did nothing. And the remedy the
// failure guide gives: each attempt carries an action id, and a caller that
// did not act gives its slot back with `undo` once Redis answers again (the
// helper below is the guide's code).

import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRateLimiterError, RollingRateLimiter } from '../../../src/index.js';
import { connectIORedis, retryUntil, type TestConnection } from '../../support/fault-injection.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

/** Gives back `actionId`'s slot once Redis answers again: the attempt may have been recorded there after it timed out. */
async function undoWhenStoreAnswers(limiter: RollingRateLimiter, id: string, actionId: string): Promise<void> {
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      // A dry run that Redis answered (no `storeFailure`): what was sent before it on this connection, the
      // timed-out attempt included, has been decided.
      if ((await limiter.wouldLimitWithInfo(id)).storeFailure === undefined) {
        await limiter.undo(id, actionId);
        return;
      }
    } catch (error) {
      if (!isRateLimiterError(error)) throw error; // under 'throw', Redis is still down
    }
    await sleep(1_000);
  }
}

const RULES = { interval: 60_000, maxInInterval: 10, countBlocked: false, timeout: 200 } as const;
const CALLERS = 20;

describe('attempts that timed out while Redis was frozen', function () {
  this.timeout(60_000);
  const namespaces = uniqueNamespaces('frozen-attempts');
  let server: RedisServer;
  let connection: TestConnection;
  before(async () => {
    server = await startRedisServer();
    connection = await connectIORedis(server.url);
  });
  after(async () => {
    await connection?.close();
    await server?.stop();
  });

  /** 20 attempts with action ids while Redis is frozen; resolves, Redis running again, with how each caller was answered. */
  async function attemptWhileFrozen(limiter: RollingRateLimiter): Promise<{ actionId: string; toldBlocked: boolean; failed: boolean }[]> {
    server.pause();
    try {
      return await Promise.all(
        Array.from({ length: CALLERS }, async (_, i) => {
          const actionId = `push-${i}`;
          try {
            const info = await limiter.limitWithInfo('teacher-1', { actionId });
            return { actionId, toldBlocked: info.blocked && info.storeFailure !== undefined, failed: false };
          } catch (error) {
            if (!isRateLimiterError(error)) throw error;
            return { actionId, toldBlocked: false, failed: true };
          }
        }),
      );
    } finally {
      server.resume();
    }
  }

  for (const onStoreError of ['block', 'throw'] as const) {
    describe(`onStoreError: '${onStoreError}'`, () => {
      it('leaves up to maxInInterval admitted records, which block the id for the whole interval', async () => {
        const limiter = new RollingRateLimiter({ ...RULES, client: connection.client, namespace: namespaces.next(), onStoreError });
        const answers = await attemptWhileFrozen(limiter);
        if (onStoreError === 'block')
          expect(
            answers.filter((a) => a.toldBlocked),
            'told blocked',
          ).to.have.length(CALLERS);
        else
          expect(
            answers.filter((a) => a.failed),
            'rejected',
          ).to.have.length(CALLERS);
        const next = await retryUntil(
          'Redis decides again',
          async () => {
            const info = await limiter.limitWithInfo('teacher-1');
            return info.storeFailure === undefined ? info : undefined;
          },
          { timeoutMs: 10_000, pauseMs: 200 },
        );
        console.log(`      ${onStoreError}, no remedy: the next call is blocked ${String(next.blocked)}, for ${next.millisecondsUntilAllowed} ms`);
        expect(next.storeFailure).to.equal(undefined);
        expect(next.blocked).to.equal(true);
        expect(next.millisecondsUntilAllowed).to.be.above(55_000);
      });

      it('gives the slots back when each caller that did not act undoes its action once Redis answers', async () => {
        const limiter = new RollingRateLimiter({ ...RULES, client: connection.client, namespace: namespaces.next(), onStoreError });
        const answers = await attemptWhileFrozen(limiter);
        await Promise.all(answers.filter((a) => a.toldBlocked || a.failed).map((a) => undoWhenStoreAnswers(limiter, 'teacher-1', a.actionId)));
        const next = await limiter.limitWithInfo('teacher-1');
        console.log(`      ${onStoreError}, undone: the next call is blocked ${String(next.blocked)}, ${next.actionsRemaining} remaining`);
        expect(next.storeFailure).to.equal(undefined);
        expect(next.blocked).to.equal(false);
        expect(next.actionsRemaining).to.equal(RULES.maxInInterval - 1);
      });
    });
  }
});
