// A standalone Redis restarted under the limiter: without persistence (the
// test servers' default) the restarted server has forgotten every window, and
// each id may take its whole limit again; with AOF on (`appendonly yes`,
// `appendfsync everysec`, the same data dir and port) the windows are kept,
// through a clean restart and through a SIGKILL.

import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RollingRateLimiter } from '../../../src/index.js';
import { connectIORedis, retryUntil, type TestConnection } from '../../support/fault-injection.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

const RULES = { interval: 60_000, maxInInterval: 37 } as const;
const ATTEMPTS = 50;

interface Persistence {
  readonly name: string;
  readonly args: readonly string[];
  /** How the server goes down before it is started again on the same port, with the same arguments. */
  readonly restart: (server: RedisServer) => Promise<void>;
  /** Admissions expected after the restart, the limit having been used up before it. */
  readonly admittedAfter: number;
}

const CASES: readonly Persistence[] = [
  { name: 'no persistence, restarted', args: [], restart: (server) => server.restart(), admittedAfter: RULES.maxInInterval },
  { name: 'AOF everysec, restarted', args: ['--appendonly', 'yes', '--appendfsync', 'everysec'], restart: (server) => server.restart(), admittedAfter: 0 },
  {
    name: 'AOF everysec, SIGKILLed and started again',
    args: ['--appendonly', 'yes', '--appendfsync', 'everysec'],
    restart: async (server) => {
      await server.kill();
      await server.restart(); // the process is gone already: this starts it again
    },
    admittedAfter: 0,
  },
];

describe('a standalone Redis restarted under the limiter', function () {
  this.timeout(30_000);
  const namespaces = uniqueNamespaces('restart');

  for (const persistence of CASES) {
    describe(persistence.name, () => {
      let dir: string;
      let server: RedisServer;
      let connection: TestConnection;

      before(async () => {
        dir = await mkdtemp(join(tmpdir(), 'rwl-restart-'));
        server = await startRedisServer({ extraArgs: ['--dir', dir, ...persistence.args] });
        connection = await connectIORedis(server.url);
      });

      after(async () => {
        await connection?.close();
        await server?.stop();
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      });

      it(`admits ${persistence.admittedAfter} more of a used-up limit of ${RULES.maxInInterval} per 60 s after the restart`, async () => {
        const limiter = new RollingRateLimiter({ ...RULES, client: connection.client, namespace: namespaces.next(), countBlocked: false, timeout: 500 });
        const admitted = async (): Promise<number> => {
          let count = 0;
          for (let i = 0; i < ATTEMPTS; i += 1) if (!(await limiter.limit('seller-1'))) count += 1;
          return count;
        };
        expect(await admitted(), 'admitted before the restart').to.equal(RULES.maxInInterval);
        await persistence.restart(server);
        await retryUntil('the client is back', async () => ((await connection.ping(500)) ? true : undefined), { timeoutMs: 10_000 });
        const after = await admitted();
        console.log(`      ${persistence.name}: ${RULES.maxInInterval} admitted before, ${after} of ${ATTEMPTS} after (limit ${RULES.maxInInterval} per 60 s)`);
        expect(after, 'admitted after the restart').to.equal(persistence.admittedAfter);
      });
    });
  }
});
