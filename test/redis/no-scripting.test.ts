// A server that cannot run scripts is named at the first call, in a StoreError
// that says so and what to do, never found out by over-admission: on a real
// redis-server 7 and valkey-server 8 started with `rename-command EVAL ""` and
// `rename-command EVALSHA ""` (what a client meets behind a proxy that does not
// pass them, or on a server where they are disabled), through ioredis,
// node-redis and Valkey GLIDE; every scripted call is refused so (attempts of
// each mode, stacks, batch: true, dry runs), `onStoreError: 'allow'` carries the
// error in `storeFailure`, and `useScript: false` then decides exactly with
// plain commands (not on GLIDE, whose transactions are scripts too: its error
// says so). And, on an adapter that answers as they do: a Valkey 9.1 built
// without its Lua module (EVALSHA: NOSCRIPT, then EVAL: "Could not find
// scripting engine"), a proxy's "unsupported command", and an error raised
// inside a running script, which is left as it is.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import { RateLimiterStack, RollingRateLimiter, StoreError, type RedisClient } from '../../src/index.js';
import type { RedisAdapter } from '../../src/redis/adapters/adapter.js';
import { runScript } from '../../src/redis/adapters/run-script.js';
import { DECIDE_SCRIPT } from '../../src/redis/decide/decide-script.js';
import { ATOMIC_BLOCK_SCRIPT } from '../../src/redis/scripts/atomic-block-script.js';
import { errorOf, settle, valueOf, type Settled } from '../support/fault-injection.js';
import { connectGlide } from '../support/glide-clients.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { startRedisServer, type RedisServer, type ServerBinary } from '../support/redis-server.js';

/** The script commands renamed to nothing: the server answers `ERR unknown command 'evalsha', …`. */
const WITHOUT_SCRIPTS = ['--rename-command', 'EVAL', '', '--rename-command', 'EVALSHA', ''];

/** A client of the test, and how to close it. */
interface Connection {
  readonly client: RedisClient;
  close(): Promise<void>;
}

const CLIENTS: readonly { name: string; multi: boolean; connect: (server: RedisServer) => Promise<Connection> }[] = [
  {
    name: 'ioredis',
    multi: true,
    connect: async ({ url }) => {
      const client = new Redis(url);
      return { client, close: async () => client.disconnect() };
    },
  },
  {
    name: 'node-redis 5',
    multi: true,
    connect: async ({ url }) => {
      const client = createClient({ url });
      await client.connect();
      return { client, close: async () => client.destroy() };
    },
  },
  {
    name: 'Valkey GLIDE',
    multi: false, // its transactions are the atomic block script
    connect: async ({ host, port }) => {
      const client = await connectGlide([{ host, port }]);
      return { client, close: async () => client.close() };
    },
  },
];

/** The StoreError of a server without scripting, with the server's own error as its cause. */
function expectNoScripting(settled: Settled<unknown>, what: string, transaction = false): void {
  const error = errorOf(settled, what);
  expect(error, what).to.be.instanceOf(StoreError);
  const { message, code, cause } = error as StoreError;
  expect(code, what).to.equal('ERR_RATE_LIMITER_STORE');
  expect(message, what).to.include('cannot run Lua scripts').and.to.include('EVALSHA/EVAL').and.to.include('use a server with scripting');
  expect(message, what).to.include('`useScript: false`').and.to.include('`countBlocked: true` with a local clock');
  if (transaction) expect(message, what).to.include('does not help');
  else expect(message, what).to.include('The limiter decides with a Lua script by default');
  expect(message, `${what}: the keys the server quotes stay in the cause`).not.to.include('with args beginning with');
  expect((cause as Error).message, `${what}: the cause`).to.match(/unknown command/i);
  expect(settled.ms, `${what}: refused at once, not timed out`).to.be.below(1_000);
}

for (const binary of ['redis-server', 'valkey-server'] as const satisfies readonly ServerBinary[]) {
  describe(`a ${binary} that cannot run scripts (EVAL and EVALSHA renamed away)`, function () {
    this.timeout(20_000);
    const namespaces = uniqueNamespaces('no-scripting');
    let server: RedisServer;
    before(async () => {
      server = await startRedisServer({ binary, extraArgs: WITHOUT_SCRIPTS });
    });
    after(async () => server?.stop());

    for (const { name, multi, connect } of CLIENTS) {
      describe(name, () => {
        let connection: Connection;
        before(async () => {
          connection = await connect(server);
        });
        after(async () => connection?.close());
        const limiter = (options: Partial<ConstructorParameters<typeof RollingRateLimiter>[0]> = {}): RollingRateLimiter =>
          new RollingRateLimiter({ client: connection.client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, ...options });

        it('refuses the first call of every scripted mode with a StoreError that names the missing scripting and the way out', async () => {
          expectNoScripting(await settle(() => limiter().limit('user')), 'limit()');
          expectNoScripting(await settle(() => limiter({ countBlocked: false }).limitWithInfo('user')), 'countBlocked: false');
          expectNoScripting(await settle(() => limiter({ clock: 'redis' }).limit('user')), "clock: 'redis'");
          expectNoScripting(await settle(() => limiter().wouldLimit('user')), 'wouldLimit()');
          expectNoScripting(await settle(() => limiter().limit('user', { actionId: 'job-1' })), 'an action id');
          expectNoScripting(await settle(() => new RateLimiterStack([limiter(), limiter({ interval: 1_000, maxInInterval: 1 })]).limit('user')), 'a stack');
          const batched = limiter({ batch: true });
          const answers = await Promise.all(['a', 'b', 'c'].map((id) => settle(() => batched.limit(id))));
          answers.forEach((answer, i) => expectNoScripting(answer, `batch: true, decision ${i}`));
        });

        it("with onStoreError: 'allow', admits as the policy says, and storeFailure carries the same error", async () => {
          const info = valueOf(await settle(() => limiter({ onStoreError: 'allow' }).limitWithInfo('user')), 'limitWithInfo()');
          expect(info.blocked).to.equal(false);
          expect(info.storeFailure?.policy).to.equal('allow');
          expect(info.storeFailure?.error.message).to.include('cannot run Lua scripts');
        });

        if (multi) {
          it('decides exactly with useScript: false (plain commands in a MULTI, countBlocked: true, a local clock)', async () => {
            const plain = limiter({ useScript: false });
            expect([await plain.limit('user'), await plain.limit('user'), await plain.limit('user')]).to.deep.equal([false, false, true]);
            expect(await plain.wouldLimitWithInfo('user')).to.deep.include({ blocked: true, actionsRemaining: 0 });
            await plain.clear('user');
            expect(await plain.wouldLimit('user')).to.equal(false);
          });
        } else {
          it('says that useScript: false does not help, since the client runs even a transaction as a script', async () => {
            expectNoScripting(await settle(() => limiter({ useScript: false }).limit('user')), 'useScript: false', true);
          });
        }
      });
    }
  });
}

describe('the answers of servers and proxies without scripting, and of a script that fails', () => {
  /** An adapter that answers EVALSHA and EVAL with these errors (or replies). */
  const answering = (evalsha: Error, evalReply: Error | string): RedisAdapter => ({
    client: {},
    kind: 'test',
    supportsScripts: true,
    isCluster: false,
    transaction: () => Promise.reject(new Error('not used')),
    evalsha: () => Promise.reject(evalsha),
    eval: () => (typeof evalReply === 'string' ? Promise.resolve(evalReply) : Promise.reject(evalReply)),
  });
  const run = (adapter: RedisAdapter, script = DECIDE_SCRIPT): Promise<unknown> => runScript(adapter, script, ['key'], [], (reply) => reply);
  const rejection = async (promise: Promise<unknown>): Promise<Error> => {
    try {
      await promise;
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected a rejection');
  };

  it("names a Valkey built without its Lua module: EVALSHA answers NOSCRIPT, then EVAL 'Could not find scripting engine'", async () => {
    const engineMissing = new Error("ERR Could not find scripting engine 'lua'");
    const error = await rejection(run(answering(new Error('NOSCRIPT No matching script. Please use EVAL.'), engineMissing)));
    expect(error).to.be.instanceOf(StoreError);
    expect(error.message).to.include("this rate limiter's test client cannot run Lua scripts").and.to.include("Could not find scripting engine 'lua'");
    expect(error.message).to.include('Valkey 9.1 or later without its Lua module').and.to.include('`useScript: false`');
    expect(error.cause).to.equal(engineMissing);
  });

  it("names a proxy that answers 'unsupported command'", async () => {
    const error = await rejection(run(answering(new Error("unsupported command 'evalsha'"), 'unused')));
    expect(error).to.be.instanceOf(StoreError);
    expect(error.message).to.include('cannot run Lua scripts');
  });

  it('says when even the transaction is a script (the atomic block of GLIDE and @upstash/redis)', async () => {
    const error = await rejection(run(answering(new Error("ERR unknown command 'EVALSHA', with args beginning with: "), 'unused'), ATOMIC_BLOCK_SCRIPT));
    expect(error.message).to.include('cannot run Lua scripts').and.to.include('`useScript: false` does not help');
  });

  it('leaves an error raised inside a running script as it is', async () => {
    const inScript = new Error('ERR user_script:1: Unknown Redis command called from script script: 0123, on @user_script:1.');
    expect(await rejection(run(answering(inScript, 'unused')))).to.equal(inScript);
    const valkeyWording = new Error('ERR unknown command called from script script: 0123, on @user_script:1.');
    expect(await rejection(run(answering(valkeyWording, 'unused')))).to.equal(valkeyWording);
  });

  it('still explains an ACL refusal (NOPERM) as before, and passes NOSCRIPT on to EVAL', async () => {
    const error = await rejection(run(answering(new Error("NOPERM User limited has no permissions to run the 'evalsha' command"), 'unused')));
    expect(error.message).to.include('ACL SETUSER <user> +evalsha +eval');
    expect(await run(answering(new Error('NOSCRIPT No matching script.'), 'reply'))).to.equal('reply');
  });
});
