// An open circuit's answers yield to the event loop: a worker whose loops
// await only `limitWithInfo()` (test/support/open-circuit-loops.ts, in a child
// process bounded in time, so that a regression cannot hang the tests) keeps
// its timers ticking while Redis is frozen (SIGSTOP) for 3 s and the circuit
// is open, Redis decides again within 3 s of SIGCONT (the probe's reply is
// read), and the worker stops when asked. Before, once the circuit opened,
// every call settled in a microtask: no timer fired again, the probe's reply
// was never read, and the process spun at 100% CPU.

import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { startChild } from '../../support/child-process.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

const FREEZE_MS = 3_000;

/** One status line of the worker, with when the test received it. */
interface Status {
  readonly at: number;
  readonly ticks: number;
  readonly byRedis: number;
}

describe('an open circuit yields to the event loop (loops that await only the limiter, on a frozen real Redis)', function () {
  this.timeout(60_000);
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server?.stop());

  for (const [policy, loops] of [
    ['block', 2],
    ['throw', 2],
    ['block', 4],
  ] as const) {
    it(`${loops} loops, onStoreError '${policy}': timers tick while the circuit is open, Redis decides again within 3 s of SIGCONT, the worker stops when asked`, async () => {
      const child = startChild('open-circuit-loops.ts', [server.url, policy, String(loops)], 20_000);
      const statuses: Status[] = [];
      const reading = (async () => {
        for (let line = await child.nextLine(); line !== '' && line !== 'stopped'; line = await child.nextLine()) {
          if (line.startsWith('{')) statuses.push({ at: performance.now(), ...(JSON.parse(line) as { ticks: number; byRedis: number }) });
        }
      })();
      let resumed = false;
      try {
        for (let waited = 0; statuses.length === 0; waited += 50) {
          const run = await Promise.race([delay(50).then(() => undefined), child.exited]);
          if (run !== undefined) throw new Error(`the worker exited early (code ${run.code}): ${run.stderr}`);
          if (waited > 10_000) throw new Error('the worker reported nothing within 10 s');
        }
        server.pause();
        const frozenAt = performance.now();
        await delay(FREEZE_MS);
        server.resume();
        resumed = true;
        const resumedAt = performance.now();
        const last = (before: number): Status | undefined => statuses.filter((status) => status.at <= before).at(-1);
        const byRedisAtResume = last(resumedAt)?.byRedis ?? 0;
        let backAt: number | undefined;
        for (let waited = 0; backAt === undefined && waited < 3_000; waited += 50) {
          await delay(50);
          backAt = statuses.find((status) => status.at > resumedAt && status.byRedis > byRedisAtResume)?.at;
        }
        const ticksFrozen = (last(resumedAt)?.ticks ?? 0) - (last(frozenAt + 1_000)?.ticks ?? 0);
        child.send('stop');
        const stopAskedAt = performance.now();
        const run = await child.exited;
        await reading;
        const stoppedAfterMs = performance.now() - stopAskedAt;
        console.log(
          `      ${loops} loops, '${policy}': ${ticksFrozen} ticks of 50 ms in the last ${FREEZE_MS - 1_000} ms of the freeze; ` +
            `Redis decided again ${backAt === undefined ? 'never' : `${Math.round(backAt - resumedAt)} ms`} after SIGCONT; stopped ${Math.round(stoppedAfterMs)} ms after asked`,
        );
        expect(run.killed, `the worker had to be killed: ${run.stderr}`).to.equal(false);
        expect(run.code, run.stderr).to.equal(0);
        expect(ticksFrozen, 'ticks of 50 ms in the last 2 s of the freeze (40 if nothing else ran)').to.be.at.least(10);
        expect(backAt, 'Redis decides again after SIGCONT').to.be.a('number');
        expect((backAt as number) - resumedAt, 'ms from SIGCONT until Redis decided again').to.be.below(3_000);
        expect(stoppedAfterMs, 'ms from asking the worker to stop until it exited').to.be.below(3_000);
      } finally {
        if (!resumed) server.resume();
        child.send('stop');
        await child.exited;
      }
    });
  }
});
