// Tests of the real-Redis test harness (test/support/redis-server.ts): start,
// PING through the raw RESP helper, pause/resume, restart, stop, and the error
// when redis-server is missing. Needs redis-server on PATH (`npm test` sees to it).

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startRedisServer, useRedis, REDIS_SERVER_MISSING_MESSAGE, type RedisServer } from './redis-server.js';
import { answersPing, sendPing } from './resp-ping.js';

const PING_TIMEOUT_MS = 1_000;
const PAUSED_PING_TIMEOUT_MS = 200;

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).to.equal('ESRCH');
    return false;
  }
}

/** Runs `body` with one environment variable set (or unset), then restores it. */
async function withEnv(name: string, value: string | undefined, body: () => Promise<unknown>): Promise<void> {
  const original = process.env[name];
  setEnv(name, value);
  try {
    await body();
  } finally {
    setEnv(name, original);
  }
}

function setEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

describe('redis-server test harness', () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });

  after(async () => {
    await server.stop();
  });

  it('starts a server on 127.0.0.1 that answers PING', async () => {
    expect(server.host).to.equal('127.0.0.1');
    expect(server.url).to.equal(`redis://127.0.0.1:${server.port}`);
    expect(server.pid).to.be.a('number');
    expect(await sendPing(server.host, server.port, PING_TIMEOUT_MS)).to.equal('+PONG');
  });

  it('does not answer PING while paused, and answers again once resumed', async () => {
    server.pause();
    try {
      const startedAt = Date.now();
      expect(await answersPing(server.host, server.port, PAUSED_PING_TIMEOUT_MS)).to.equal(false);
      expect(Date.now() - startedAt).to.be.below(PAUSED_PING_TIMEOUT_MS + 500);
    } finally {
      server.resume();
    }
    expect(await answersPing(server.host, server.port, PING_TIMEOUT_MS)).to.equal(true);
  });

  it('restarts on the same port with a new process', async () => {
    const { port, pid: oldPid } = server;
    await server.restart();
    expect(server.port).to.equal(port);
    expect(server.pid).to.be.a('number').and.not.equal(oldPid);
    expect(isProcessAlive(oldPid as number)).to.equal(false);
    expect(await sendPing(server.host, port, PING_TIMEOUT_MS)).to.equal('+PONG');
  });

  it('stops even a paused server', async () => {
    const paused = await startRedisServer();
    const pid = paused.pid as number;
    paused.pause();
    await paused.stop();
    expect(isProcessAlive(pid)).to.equal(false);
  });

  it('stop() kills the process, and a second stop() is fine', async () => {
    const pid = server.pid as number;
    await server.stop();
    expect(() => process.kill(pid, 0))
      .to.throw()
      .with.property('code', 'ESRCH');
    await server.stop();
    expect(await answersPing(server.host, server.port, PAUSED_PING_TIMEOUT_MS)).to.equal(false);
  });

  it('runs each server in a directory of its own, so that what one saves no later server loads', async () => {
    // A replica saves the RDB of its full sync where it runs; a server started later in the same directory would load
    // its keys, and its replication offset (Redis then keeps a backlog and copies every write of a script for it).
    const one = await startRedisServer();
    const other = await startRedisServer();
    const first = new Redis(one.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    const second = new Redis(other.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      const [, firstDir] = (await first.config('GET', 'dir')) as string[];
      const [, secondDir] = (await second.config('GET', 'dir')) as string[];
      expect(firstDir).to.not.equal(process.cwd());
      expect(secondDir).to.not.equal(firstDir);
      await first.set('harness:saved', '1');
      await first.save();
      const third = await startRedisServer();
      const late = new Redis(third.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        expect(await late.exists('harness:saved')).to.equal(0);
        expect(await late.info('replication')).to.include('repl_backlog_active:0');
      } finally {
        late.disconnect();
        await third.stop();
      }
    } finally {
      first.disconnect();
      second.disconnect();
      await one.stop();
      await other.stop();
    }
  });

  it('fails with install instructions when redis-server is not on PATH', async () => {
    await withEnv('PATH', '/nonexistent', () =>
      startRedisServer().then(
        () => expect.fail('startRedisServer should have failed'),
        (error: Error) => expect(error.message).to.equal(REDIS_SERVER_MISSING_MESSAGE),
      ),
    );
  });

  it('useRedis() starts a server when REDIS_URL is not set', async () => {
    await withEnv('REDIS_URL', undefined, async () => {
      const redis = await useRedis();
      try {
        const port = Number(new URL(redis.url).port);
        expect(await answersPing('127.0.0.1', port, PING_TIMEOUT_MS)).to.equal(true);
      } finally {
        await redis.stop();
      }
    });
  });

  it('useRedis() returns REDIS_URL as it is when set', async () => {
    await withEnv('REDIS_URL', 'redis://127.0.0.1:1', async () => {
      const redis = await useRedis();
      expect(redis.url).to.equal('redis://127.0.0.1:1');
      await redis.stop();
    });
  });
});
