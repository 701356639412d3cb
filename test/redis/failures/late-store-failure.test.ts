// End to end, on a real redis-server: a limiter's calls time out while the
// server is frozen (SIGSTOP), then the server is killed (SIGKILL), and the
// client rejects the commands it had queued long after every call settled.
// The process, run with `--unhandled-rejections=strict` by
// test/support/late-failure-child.ts, must not notice: exit code 0, nothing
// on stderr, and each fallback limiter asked once.

import { expect } from 'chai';
import { lastJsonLine, startChild } from '../../support/child-process.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

interface RedisCase {
  readonly policy: string;
  readonly before: string;
  readonly during: string;
  readonly fallbackCalls: number;
}

describe('a real Redis that freezes and then dies under a limiter', function () {
  this.timeout(60_000);
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => server?.stop());

  it('times out each call once, and the late rejections after SIGKILL go nowhere', async () => {
    const child = startChild('late-failure-child.ts', ['redis', server.url], 45_000);
    expect(await child.nextLine()).to.equal('ready');
    server.pause();
    child.send('go');
    expect(await child.nextLine()).to.equal('timed-out');
    process.kill(server.pid as number, 'SIGKILL'); // the server this test started
    child.send('killed');
    const run = await child.exited;
    expect(run.killed, 'still running at the limit').to.equal(false);
    expect(run.stderr, 'stderr').to.equal('');
    expect(run.code, `exit code (stderr: ${run.stderr})`).to.equal(0);
    const result = lastJsonLine<{ clientStatus: string; errorEvents: number; cases: RedisCase[] }>(run);
    const byPolicy = Object.fromEntries(result.cases.map((c) => [c.policy, c]));
    for (const c of result.cases) expect(c.before, `${c.policy} before the freeze`).to.equal('resolved false');
    expect(byPolicy.throw?.during).to.equal('rejected TimeoutError');
    expect(byPolicy.allow?.during).to.equal('resolved false');
    expect(byPolicy.block?.during).to.equal('resolved true');
    expect(byPolicy.fallback?.during).to.equal('resolved false');
    expect(byPolicy.fallback?.fallbackCalls).to.equal(1);
    console.log(
      `      frozen then killed: ${result.cases.map((c) => `${c.policy} → ${c.during}`).join(', ')}; ` +
        `client ${result.clientStatus} after ${result.errorEvents} error events; exit code ${run.code}`,
    );
  });
});
