// One master of a real Redis Cluster SIGKILLed under load: callers attempt,
// each in a loop, on ids spread over every master, through one or more
// limiters on one cluster client (default circuit breaker, `onStoreError:
// 'throw'`), from a second before the kill until a few seconds after a replica
// took over. Each call is counted by where its id lived when the load began:
// on a healthy master or on the one killed. Afterwards the killed node is
// started again (it rejoins as a replica), so that the cluster can lose a
// master again. Used by test/redis/cluster/breaker-domains.test.ts and by
// master-kill-table.ts, which prints the figures per client and batch mode.

import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../src/index.js';
import type { ClusterClientKind } from './cluster-clients.js';
import { uniqueNamespaces } from './namespaces.js';
import { keySlot, masterOfSlot, slotOwners, type RedisClusterHandle } from './redis-cluster.js';
import { ownerOfSlot } from './slot-migration.js';

/** How the load runs. */
export interface MasterKillOptions {
  /** One limiter per entry, with that `batch` option, each with its own callers. */
  readonly batches: readonly boolean[];
  /** Callers per limiter. @default 8 */
  readonly callers?: number;
  /** Ids the callers go round, spread over every master. @default 90 */
  readonly ids?: number;
  /** The limiters' `timeout`. @default 1000 */
  readonly timeoutMs?: number;
  /** How long the load goes on after a replica took over the killed master's slots. @default 3000 */
  readonly afterPromotionMs?: number;
}

/** The calls of one side (ids of healthy masters, or of the killed one) after the kill. */
export interface SideCount {
  readonly calls: number;
  readonly failed: number;
  /** Failures by error code (`CIRCUIT_OPEN`, `ERR_RATE_LIMITER_TIMEOUT`, …). */
  readonly byError: Readonly<Record<string, number>>;
  /** When the last failed call started, in ms after the promotion (negative: before it); undefined without failures. */
  readonly lastFailureAfterPromotionMs: number | undefined;
  /** The messages of the `CIRCUIT_OPEN` failures, each once. */
  readonly circuitMessages: readonly string[];
}

/** What one limiter went through. */
export interface LimiterOutcome {
  readonly batch: boolean;
  readonly healthy: SideCount;
  readonly dead: SideCount;
}

/** What a kill did. */
export interface MasterKillReport {
  /** `host:port` of the master killed. */
  readonly victim: string;
  /** Ms from the kill until a replica served its slots. */
  readonly promotedAfterMs: number;
  /** One per entry of `batches`. */
  readonly limiters: readonly LimiterOutcome[];
}

interface Call {
  readonly limiter: number;
  readonly onVictim: boolean;
  /** Ms after the kill. */
  readonly startedAt: number;
  /** `'ok'`, or the error's code (or name). */
  readonly outcome: string;
  readonly message: string | undefined;
}

const WARM_UP_MS = 1_000;
const namespaces = uniqueNamespaces('master-kill');

/** Kills the master of the first id's slot while callers attempt on every master's ids, then restarts it as a replica. */
export async function killMasterUnderLoad(cluster: RedisClusterHandle, clientKind: ClusterClientKind, options: MasterKillOptions): Promise<MasterKillReport> {
  const { callers = 8, ids: idCount = 90, timeoutMs = 1_000, afterPromotionMs = 3_000 } = options;
  const ids = Array.from({ length: idCount }, (_, i) => `id-${i}`);
  const ranges = await slotOwners(cluster);
  const ownerOf = (id: string): string => masterOfSlot(ranges, keySlot(id));
  const victimSlot = keySlot(ids[0] as string);
  const victim = ownerOf(ids[0] as string);
  const server = cluster.servers.find((candidate) => `${candidate.host}:${candidate.port}` === victim);
  if (server === undefined) throw new Error(`no server started here is ${victim}`);
  const masters = new Set(ranges.map((range) => `${range.master.host}:${range.master.port}`));
  if (new Set(ids.map(ownerOf)).size < masters.size) throw new Error('the ids do not reach every master');

  const connected = await clientKind.connect(cluster);
  const limiters = options.batches.map(
    (batch) =>
      new RollingRateLimiter({ client: connected.client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1_000_000, timeout: timeoutMs, batch }),
  );
  const calls: Call[] = [];
  let killedAt = performance.now();
  let stop = false;
  const caller = async (limiter: number, index: number): Promise<void> => {
    for (let i = 0; !stop && i < 1_000_000; i++) {
      const id = ids[(index * 11 + i) % ids.length] as string;
      const startedAt = performance.now() - killedAt;
      let outcome = 'ok';
      let message: string | undefined;
      try {
        await (limiters[limiter] as RollingRateLimiter).limit(id);
      } catch (error) {
        const { code } = error as { code?: unknown };
        outcome = typeof code === 'string' ? code : (error as Error).name;
        message = (error as Error).message;
        await delay(20); // a failed caller pauses, as a real one would
      }
      calls.push({ limiter, onVictim: ownerOf(id) === victim, startedAt, outcome, message });
    }
  };

  let promotedAfterMs = Number.NaN;
  try {
    const running = limiters.flatMap((_, limiter) => Array.from({ length: callers }, (__, index) => caller(limiter, index)));
    await delay(WARM_UP_MS);
    killedAt = performance.now();
    await server.kill();
    promotedAfterMs = await timeUntilPromoted(cluster, victimSlot, victim, killedAt);
    await delay(afterPromotionMs);
    stop = true;
    await Promise.all(running);
  } finally {
    stop = true;
    await connected.close();
    await server.restart();
    await waitUntilReplicaSynced(server.url);
  }

  const side = (limiter: number, onVictim: boolean): SideCount => {
    const mine = calls.filter((call) => call.limiter === limiter && call.onVictim === onVictim && call.startedAt >= 0);
    const failed = mine.filter((call) => call.outcome !== 'ok');
    const byError: Record<string, number> = {};
    for (const call of failed) byError[call.outcome] = (byError[call.outcome] ?? 0) + 1;
    const last = failed.length === 0 ? undefined : Math.max(...failed.map((call) => call.startedAt)) - promotedAfterMs;
    const circuitMessages = [...new Set(failed.filter((call) => call.outcome === 'CIRCUIT_OPEN').map((call) => call.message ?? ''))];
    return { calls: mine.length, failed: failed.length, byError, lastFailureAfterPromotionMs: last, circuitMessages };
  };
  return {
    victim,
    promotedAfterMs,
    limiters: options.batches.map((batch, limiter) => ({ batch, healthy: side(limiter, false), dead: side(limiter, true) })),
  };
}

/** The circuit breaker's default cooldown: the killed master's ids may fail until its replica is promoted, then for at most about this long. */
const BREAKER_COOLDOWN_MS = 1_000;

const describeSide = (side: SideCount): string =>
  `${side.failed} of ${side.calls} failed${
    side.failed === 0
      ? ''
      : ` (${Object.entries(side.byError)
          .map(([code, n]) => `${code} ×${n}`)
          .join(', ')})`
  }`;

/**
 * Prints what each limiter of a kill went through, and checks that the failure
 * stayed with the killed master: no call on a healthy master's ids failed, and
 * the killed master's ids failed, then worked again within the breaker's
 * cooldown + 1.5 s of the promotion.
 */
export function expectOneMasterFailed(clientName: string, report: MasterKillReport): void {
  for (const { batch, healthy, dead } of report.limiters) {
    console.log(
      `      ${clientName}, batch: ${String(batch)}: master ${report.victim} SIGKILLed, replica promoted after ${Math.round(report.promotedAfterMs)} ms; ` +
        `healthy masters' ids: ${describeSide(healthy)}; killed master's ids: ${describeSide(dead)}` +
        (dead.lastFailureAfterPromotionMs === undefined ? '' : `, the last ${Math.round(dead.lastFailureAfterPromotionMs)} ms after the promotion`),
    );
  }
  for (const { batch, healthy, dead } of report.limiters) {
    expect(healthy.calls, `calls on healthy masters' ids (batch: ${String(batch)})`).to.be.above(100);
    expect(healthy.failed, `failed calls on healthy masters' ids (batch: ${String(batch)}): ${JSON.stringify(healthy.byError)}`).to.equal(0);
    expect(dead.failed, `the killed master's ids fail while it is down (batch: ${String(batch)})`).to.be.above(0);
    expect(dead.lastFailureAfterPromotionMs, `ms from the promotion to the last failure on the killed master's ids (batch: ${String(batch)})`).to.be.below(
      BREAKER_COOLDOWN_MS + 1_500,
    );
    // The open circuit is the killed master's, and says so.
    for (const message of dead.circuitMessages) expect(message, "a CIRCUIT_OPEN message on the killed master's ids").to.include(report.victim);
  }
}

/** Polls the live nodes until `slot` is served by a master other than `victim`; ms after `killedAt`. */
export async function timeUntilPromoted(cluster: RedisClusterHandle, slot: number, victim: string, killedAt: number): Promise<number> {
  for (let poll = 0; poll < 300; poll++) {
    const owner = await ownerOfSlot(cluster, slot).catch(() => victim);
    if (owner !== victim) return performance.now() - killedAt;
    await delay(50);
  }
  throw new Error(`no replica took over slot ${slot} from ${victim} within 15 s`);
}

/** Polls the restarted node until it is a replica whose link to its master is up (at most 20 s). */
async function waitUntilReplicaSynced(url: string): Promise<void> {
  let last = 'not polled';
  for (let poll = 0; poll < 200; poll++) {
    const redis = new Redis(url, { lazyConnect: true, connectTimeout: 1_000, commandTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => {});
    try {
      await redis.connect();
      const role = (await redis.call('ROLE')) as unknown[];
      if (role[0] === 'slave' && role[3] === 'connected') return;
      last = JSON.stringify(role);
    } catch (error) {
      last = String(error);
    } finally {
      redis.disconnect();
    }
    await delay(100);
  }
  throw new Error(`the restarted node ${url} did not become a synced replica within 20 s: ${last}`);
}
