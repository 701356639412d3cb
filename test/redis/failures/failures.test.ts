// Store failures on a real Redis, for every `onStoreError` policy, on ioredis
// and on node-redis 5, with `timeout: 200`. The server is stopped (then
// restarted on the same port) and frozen with SIGSTOP (then continued); during
// each fault every call must settle within the timeout plus a small margin
// (and plus however late a timer set beside it fired: a loaded machine fires
// the limiter's timer late too),
// with the policy's result, and afterwards the very same limiter instances
// must decide from Redis again. Each policy prints how long its calls took to
// settle, one line per client, fault and policy.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { KeyBuilder } from '../../../src/core/identity.js';
import {
  RateLimiterStack,
  RollingRateLimiter,
  StoreError,
  TimeoutError,
  isRateLimiterError,
  type RateLimitInfo,
  type StackRateLimitInfo,
} from '../../../src/index.js';
import {
  connectIORedis,
  connectNodeRedis5,
  errorOf,
  reportSettle,
  retryUntil,
  settleBesideTimer,
  valueOf,
  type TestConnection,
  type TimedSettled,
} from '../../support/fault-injection.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

const TIMEOUT_MS = 200;
/** How much later than `timeout` a call may settle. */
const MARGIN_MS = 250;
/** A paused server never answers, so nothing can settle much before the timer (timers may fire a few ms "early" against performance.now()). */
const PAUSED_LOWER_BOUND_MS = TIMEOUT_MS - 20;
const RULES = { interval: 60_000, maxInInterval: 2 } as const;

type PolicyName = 'throw' | 'allow' | 'block' | 'fallback';
const POLICIES: readonly PolicyName[] = ['throw', 'allow', 'block', 'fallback'];

interface Fault {
  readonly name: 'stopped' | 'paused';
  inject(server: RedisServer): Promise<void>;
  heal(server: RedisServer): Promise<void>;
  readonly healed: string;
}

const FAULTS: readonly Fault[] = [
  { name: 'stopped', inject: (server) => server.stop(), heal: (server) => server.restart(), healed: 'restarted on the same port' },
  { name: 'paused', inject: async (server) => server.pause(), heal: async (server) => server.resume(), healed: 'resumed' },
];

const CLIENTS: readonly { name: string; connect: (url: string) => Promise<TestConnection> }[] = [
  { name: 'ioredis', connect: (url) => connectIORedis(url) },
  { name: 'node-redis 5', connect: (url) => connectNodeRedis5(url) },
];

/** Checks what a store failure handed to the caller or to `storeFailure` looks like. */
function expectStoreFailure(error: unknown): void {
  expect(isRateLimiterError(error), String(error)).to.equal(true);
  if (error instanceof TimeoutError) {
    expect(error.code).to.equal('ERR_RATE_LIMITER_TIMEOUT');
    expect(error.timeoutMs).to.equal(TIMEOUT_MS);
  } else {
    expect(error, String(error)).to.be.instanceOf(StoreError);
    expect((error as StoreError).code).to.equal('ERR_RATE_LIMITER_STORE');
    expect((error as StoreError).cause, 'the client error is the cause').to.be.instanceOf(Error);
  }
}

/** Settles `call` beside a timer of the limiter's timeout (see {@link settleBesideTimer}). */
function settle<T>(call: () => Promise<T>): Promise<TimedSettled<T>> {
  return settleBesideTimer(call, TIMEOUT_MS);
}

function expectTiming(settled: readonly TimedSettled<unknown>[], fault: Fault['name']): void {
  for (const call of settled) {
    // The limiter's timer fires as late as the one set beside it; the margin is for the rest.
    const boundMs = TIMEOUT_MS + call.timerLateMs + MARGIN_MS;
    expect(call.ms, `settled within the timeout plus the margin (a timer beside it fired ${Math.round(call.timerLateMs)} ms late)`).to.be.below(boundMs);
    if (fault === 'paused') expect(call.ms, 'a paused server cannot answer before the timeout').to.be.at.least(PAUSED_LOWER_BOUND_MS);
  }
}

/** Waits until a limiter (or stack) decides from the store again: a dry run without a store failure. */
async function untilRecovered(what: string, limiter: { wouldLimitWithInfo(id: string): Promise<RateLimitInfo> }): Promise<void> {
  await retryUntil(what, async () => ((await limiter.wouldLimitWithInfo('probe')).storeFailure === undefined ? true : undefined), {
    timeoutMs: 5_000,
  });
}

for (const { name: clientName, connect } of CLIENTS) {
  describe(`store failures on ${clientName} (timeout ${TIMEOUT_MS} ms)`, function () {
    this.timeout(20_000);
    const namespaces = uniqueNamespaces('failures');
    let server: RedisServer;
    let connection: TestConnection;
    let admin: Redis;
    const limiters = new Map<PolicyName, RollingRateLimiter>();
    let fallback: RollingRateLimiter;
    let blockStack: RateLimiterStack;
    let fallbackStack: RateLimiterStack;
    let memoryStack: RateLimiterStack;

    before(async () => {
      server = await startRedisServer();
      connection = await connect(server.url);
      admin = new Redis(server.url, { lazyConnect: true });
      admin.on('error', () => {}); // it sees the outages too
      fallback = new RollingRateLimiter({ ...RULES, timeout: TIMEOUT_MS });
      for (const policy of POLICIES) {
        const onStoreError = policy === 'fallback' ? fallback : policy;
        const namespace = namespaces.next(policy);
        limiters.set(policy, new RollingRateLimiter({ ...RULES, client: connection.client, namespace, timeout: TIMEOUT_MS, onStoreError }));
      }
      const tier = (suffix: string, rules: { interval: number; maxInInterval: number }): RollingRateLimiter =>
        new RollingRateLimiter({ ...rules, client: connection.client, namespace: namespaces.next(suffix), timeout: TIMEOUT_MS });
      blockStack = new RateLimiterStack([tier('block-minute', RULES), tier('block-hour', { interval: 3_600_000, maxInInterval: 5 })], {
        onStoreError: 'block',
      });
      memoryStack = new RateLimiterStack([new RollingRateLimiter(RULES), new RollingRateLimiter({ interval: 3_600_000, maxInInterval: 5, namespace: 'hour' })]);
      fallbackStack = new RateLimiterStack([tier('fallback-minute', RULES), tier('fallback-hour', { interval: 3_600_000, maxInInterval: 5 })], {
        onStoreError: memoryStack,
      });
    });

    after(async () => {
      await connection?.close();
      admin?.disconnect();
      await server?.stop();
    });

    const limiterFor = (policy: PolicyName): RollingRateLimiter => limiters.get(policy) as RollingRateLimiter;

    for (const fault of FAULTS) {
      describe(`while Redis is ${fault.name}`, () => {
        before(() => fault.inject(server));
        after(() => fault.heal(server));

        for (const policy of POLICIES) {
          it(`${policy}: limit() and limitWithInfo() settle within the timeout with the policy's decision`, async () => {
            const limiter = limiterFor(policy);
            const id = `${fault.name}:${policy}`;
            const calls: TimedSettled<unknown>[] = [];
            const names = ['limit', 'limitWithInfo'];
            const limited = await settle(() => limiter.limit(id));
            const withInfo = await settle(() => limiter.limitWithInfo(id));
            calls.push(limited, withInfo);
            if (policy === 'throw') {
              expectStoreFailure(errorOf(limited, 'limit()'));
              expectStoreFailure(errorOf(withInfo, 'limitWithInfo()'));
            } else {
              const info = valueOf(withInfo, 'limitWithInfo()');
              expect(info.storeFailure?.policy).to.equal(policy);
              expectStoreFailure(info.storeFailure?.error);
              if (policy === 'allow') {
                expect(valueOf(limited, 'limit()')).to.equal(false);
                expect({ ...info, storeFailure: undefined }).to.deep.equal({
                  blocked: false,
                  blockedDueToCount: false,
                  blockedDueToMinDifference: false,
                  actionsRemaining: RULES.maxInInterval,
                  millisecondsUntilAllowed: 0,
                  storeFailure: undefined,
                });
              } else if (policy === 'block') {
                expect(valueOf(limited, 'limit()')).to.equal(true);
                expect(info.blocked).to.equal(true);
                expect(info.actionsRemaining).to.equal(0);
                expect(info.millisecondsUntilAllowed).to.equal(TIMEOUT_MS);
              } else {
                // The fallback's own window counts: two allowed, the third blocked.
                expect(valueOf(limited, 'limit()')).to.equal(false);
                expect(info.blocked).to.equal(false);
                expect(info.actionsRemaining).to.equal(0);
                const third = await settle(() => limiter.limitWithInfo(id));
                calls.push(third);
                names.push('third limitWithInfo');
                const thirdInfo = valueOf(third, 'third limitWithInfo()');
                expect(thirdInfo.blocked).to.equal(true);
                expect(thirdInfo.blockedDueToCount).to.equal(true);
                expect(thirdInfo.storeFailure?.policy).to.equal('fallback');
                expect((await fallback.wouldLimitWithInfo(id)).actionsRemaining, "the fallback's own state").to.equal(0);
              }
            }
            reportSettle([clientName, fault.name, policy], calls, names);
            expectTiming(calls, fault.name);
          });
        }

        if (fault.name === 'paused') {
          it("a stack with onStoreError 'block' settles within the timeout, blocked in every tier", async () => {
            const settled = await settle(() => blockStack.limitWithInfo('paused:stack'));
            reportSettle([clientName, fault.name, 'stack block'], [settled], ['limitWithInfo']);
            const info = valueOf(settled, 'stack.limitWithInfo()');
            expect(info.blocked).to.equal(true);
            expect(info.storeFailure?.policy).to.equal('block');
            expectStoreFailure(info.storeFailure?.error);
            expect(info.tiers.map((tier) => tier.blocked)).to.deep.equal([true, true]);
            expectTiming([settled], fault.name);
          });

          it('a stack with a fallback stack settles within the timeout with the fallback stack deciding', async () => {
            const calls: TimedSettled<StackRateLimitInfo>[] = [];
            for (let i = 0; i < 3; i += 1) calls.push(await settle(() => fallbackStack.limitWithInfo('paused:stack')));
            reportSettle([clientName, fault.name, 'stack fallback'], calls, ['1st', '2nd', '3rd']);
            const infos = calls.map((call, i) => valueOf(call, `stack.limitWithInfo() #${i + 1}`));
            expect(infos.map((info) => info.storeFailure?.policy)).to.deep.equal(['fallback', 'fallback', 'fallback']);
            expect(infos.map((info) => info.blocked)).to.deep.equal([false, false, true]);
            expect(
              infos[2]?.tiers.map((tier) => tier.blocked),
              'the minute tier of the fallback stack blocks',
            ).to.deep.equal([true, false]);
            expectTiming(calls, fault.name);
          });
        }
      });

      describe(`after Redis is ${fault.healed}`, () => {
        it('the same limiter instances decide from Redis again, without storeFailure', async () => {
          for (const policy of POLICIES) {
            const limiter = limiterFor(policy);
            await untilRecovered(`${policy} limiter after ${fault.name}`, limiter);
            const id = `recovered:${fault.name}:${policy}`;
            const infos: RateLimitInfo[] = [];
            for (let i = 0; i < 3; i += 1) infos.push(await limiter.limitWithInfo(id));
            expect(
              infos.map((info) => info.storeFailure),
              policy,
            ).to.deep.equal([undefined, undefined, undefined]);
            expect(
              infos.map((info) => info.blocked),
              policy,
            ).to.deep.equal([false, false, true]);
            expect(
              infos.map((info) => info.actionsRemaining),
              policy,
            ).to.deep.equal([1, 0, 0]);
            expect(await admin.exists(new KeyBuilder(limiter.namespace).keyFor(id)), `${policy}: the window is in Redis`).to.equal(1);
          }
          // Not asserted, reported: attempts that timed out during the fault may still reach Redis once it is back
          // (the TimeoutError says the outcome is unknown); ZCARD of each fault-time id shows how many did.
          const late = await Promise.all(
            POLICIES.map(async (policy) => `${policy} ${await admin.zcard(new KeyBuilder(limiterFor(policy).namespace).keyFor(`${fault.name}:${policy}`))}`),
          );
          console.log(`      late writes (${clientName}, ${fault.name}): members recorded for the fault-time ids: ${late.join(', ')}`);
          // A dry run on an empty window reports one slot taken by the attempt it simulates.
          const untouched = await fallback.wouldLimitWithInfo(`recovered:${fault.name}:fallback`);
          expect(untouched.actionsRemaining, 'the fallback was not asked').to.equal(RULES.maxInInterval - 1);
        });

        it('the stacks decide from Redis again', async () => {
          for (const stack of [blockStack, fallbackStack]) {
            await untilRecovered(`stack after ${fault.name}`, stack);
            const info = await stack.limitWithInfo(`recovered:${fault.name}:stack`);
            expect(info.storeFailure).to.equal(undefined);
            expect(info.blocked).to.equal(false);
            expect(info.tiers.map((tier) => tier.actionsRemaining)).to.deep.equal([1, 4]);
          }
        });
      });
    }
  });
}
