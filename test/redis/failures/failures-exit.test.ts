// A process that used the limiter exits by itself: each scenario of
// test/support/exit-child.ts runs in its own `node --unhandled-rejections=strict`
// process, uses a limiter (in memory, on a live Redis, or with
// `onStoreError: 'allow'` against a port where nothing listens), closes its
// client the way an application would, and returns without process.exit().
// The process must then exit with code 0 within a few seconds, having printed
// its result and nothing on stderr. Each scenario prints how long its process
// ran and how long it lingered after its last output.

import { expect } from 'chai';
import { runChild } from '../../support/child-process.js';
import { findFreeLoopbackPort, LOOPBACK_HOST } from '../../support/free-port.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

/** A child still running after this long is SIGKILLed (by its PID) and the test fails (generous: seven start at once, on a busy machine). */
const CHILD_LIMIT_MS = 20_000;
/**
 * How long a child may linger between its last output and its exit. ioredis's
 * disconnect() while it is between reconnect attempts starts a
 * `disconnectTimeout` timer (2 s by default) on the already-closed socket that
 * nothing clears, so that scenario lingers about 2 s: that is ioredis, not the
 * limiter, whose timers are unreferenced and cleared.
 */
const LINGER_LIMIT_MS = 3_500;

describe('a process that used the limiter exits by itself', function () {
  this.timeout(CHILD_LIMIT_MS + 10_000);
  let server: RedisServer;
  let deadUrl: string;
  before(async () => {
    server = await startRedisServer();
    deadUrl = `redis://${LOOPBACK_HOST}:${await findFreeLoopbackPort()}`;
  });
  after(async () => server?.stop());

  const fromStore = ['allowed', 'allowed', 'blocked'];
  const scenarios: readonly { scenario: string; url: () => string; expectSeen: (seen: string[]) => void }[] = [
    { scenario: 'memory', url: () => '', expectSeen: (seen) => expect(seen).to.deep.equal(fromStore) },
    { scenario: 'ioredis-quit', url: () => server.url, expectSeen: (seen) => expect(seen).to.deep.equal(fromStore) },
    { scenario: 'node-redis-close', url: () => server.url, expectSeen: (seen) => expect(seen).to.deep.equal(fromStore) },
    ...['ioredis-unreachable-noretry', 'ioredis-unreachable-disconnect', 'node-redis-unreachable-noreconnect', 'node-redis-unreachable-destroy'].map(
      (scenario) => ({
        scenario,
        url: () => deadUrl,
        expectSeen: (seen: string[]) => {
          expect(seen).to.have.length(3);
          for (const outcome of seen) expect(outcome).to.match(/^allowed \(allow: (StoreError|TimeoutError)\)$/);
        },
      }),
    ),
  ];

  it('in every scenario: exit code 0, within a few seconds, no unhandled rejection, nothing on stderr', async () => {
    // All at once, to keep the wall time down; each is bounded by CHILD_LIMIT_MS.
    const runs = await Promise.all(scenarios.map(({ scenario, url }) => runChild('exit-child.ts', [scenario, url()], CHILD_LIMIT_MS)));
    const failures: string[] = [];
    runs.forEach((run, i) => {
      const { scenario, expectSeen } = scenarios[i] as (typeof scenarios)[number];
      const lastLine = run.stdout.trim().split('\n').at(-1) ?? '';
      console.log(
        `      exit (${scenario}): code ${run.code}${run.signal ? ` signal ${run.signal}` : ''}, ` +
          `${Math.round(run.totalMs)} ms after spawn, ${Math.round(run.lingerMs)} ms after its last output: ${lastLine}`,
      );
      try {
        expect(run.killed, 'still running after the limit').to.equal(false);
        expect(run.stderr, 'stderr').to.equal('');
        expect(run.code, `exit code (stderr: ${run.stderr})`).to.equal(0);
        expect(run.lingerMs, 'lingered after its work was done').to.be.below(LINGER_LIMIT_MS);
        const result = JSON.parse(lastLine) as { scenario: string; seen: string[] };
        expect(result.scenario).to.equal(scenario);
        expectSeen(result.seen);
      } catch (error) {
        failures.push(`${scenario}: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    expect(failures).to.deep.equal([]);
  });
});
