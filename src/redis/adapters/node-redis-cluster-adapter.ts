// The adapter for node-redis (`redis` 4 and 5) cluster clients. Every call is
// routed by its first key, and the client's own redirection handling stays in
// charge where it works: single commands (the scripts) follow MOVED and ASK.
// Where it does not, this adapter finishes the job:
//
// - node-redis sends a MULTI straight to the master its slot map names and
//   follows neither MOVED nor ASK for it (v5), or sees only EXEC's
//   EXECABORT (v4); and it refreshes its slot map only when a single command
//   meets MOVED. So once a slot had moved, every MULTI for it failed.
// - A multi-key script meets TRYAGAIN while its slot is being migrated (its
//   keys are split between two masters), which no client retries.
// - v4 sends ASKING apart from the command it is for, so under concurrency
//   another command can take the ASKING and the command is refused.
//
// On such an answer (nothing was run: Redis refuses the whole MULTI or script),
// the adapter refreshes the client's slot map by sending one `EXISTS <key>`
// through the client (which follows MOVED and re-reads the slot map), then
// sends the call to the node the answer named, or to the master the client
// now holds for the slot, itself: `ASKING` and the call queued together on
// that node's connection, so nothing can come between them. It retries a
// bounded number of times with a short, growing pause.
//
// A master that dies is another matter: node-redis keeps the dead master in
// its slot map and queues commands for it until it comes back, which it may
// never do, while the cluster promotes its replica. Nothing answers MOVED, so
// the map is never re-read. The adapter therefore watches its calls: when one
// has waited more than STALL_MS, it asks a live master about the stuck key,
// through the client, and again every RESCUE_INTERVAL_MS while calls stall,
// whether or not new calls come. That master answers
// MOVED, node-redis re-reads the slot map, and once the replica is promoted
// the map names it and the calls go there.

import { maxRetries, redirectionOf, retryPauseMs, type Redirection } from './cluster-redirection.js';
import { keySlot } from './key-slot.js';
import type { RedisAdapter } from './adapter.js';
import { hasMembers, type NodeRedisLikeCluster, type RedisCommand } from './client-types.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';
import { checkedReplies, scriptCommand, stringsOf } from './node-redis-commands.js';
import { nodeRedisConnectionProblem, notOpenError } from './node-redis-connection.js';

/** A connection to one node, as node-redis's `nodeClient()` gives it. */
interface NodeConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

/** What node-redis 4 and 5 cluster clients expose about their nodes, read by duck typing. */
interface ClusterNodes {
  readonly nodeByAddress: { get(address: string): object | undefined };
  readonly slots: ArrayLike<{ readonly master?: { readonly address?: string } } | undefined>;
  nodeClient(node: object): NodeConnection | Promise<NodeConnection>;
}

/** A call unanswered for this long means its master may be gone: time to check the slot map. */
const STALL_MS = 1_000;
/** At most one check of the slot map per this many ms while calls stall. */
const RESCUE_INTERVAL_MS = 300;
/** A call unanswered for this long is no longer watched (its caller timed out long ago). */
const FORGET_MS = 60_000;

/** A call not answered yet: when it started, and its key. */
interface PendingCall {
  readonly startedAt: number;
  readonly key: string;
}

/** The first rejection among `outcomes` in order (an ASK or MOVED before EXEC's EXECABORT), else the last value. */
function lastValueOrFirstError(outcomes: PromiseSettledResult<unknown>[]): unknown {
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return (outcomes[outcomes.length - 1] as PromiseFulfilledResult<unknown>).value;
}

/**
 * Sends `commands` to one node back to back, in one turn of the event loop, so
 * that they sit together in its connection's queue: `ASKING` first when asked,
 * then the commands. Resolves with the last reply; rejects with the first error.
 */
function sendTogether(node: NodeConnection, asking: boolean, commands: readonly string[][]): Promise<unknown> {
  const replies: Promise<unknown>[] = [];
  if (asking) replies.push(node.sendCommand(['ASKING']));
  for (const command of commands) replies.push(node.sendCommand(command));
  return Promise.allSettled(replies).then(lastValueOrFirstError);
}

function hasNodes(client: object): client is ClusterNodes {
  return hasMembers(client, { nodeClient: 'function', nodeByAddress: 'object', slots: 'object' });
}

/**
 * {@link RedisAdapter} for a node-redis (`redis` v4 or v5) cluster client made
 * by `createCluster`. Every call is routed by its first key; a call refused
 * because its slot moved or is moving is sent again where the slot now is.
 */
export class NodeRedisClusterAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeCluster;
  readonly kind = 'node-redis cluster';
  readonly isCluster = true;
  readonly supportsScripts = true;
  #refreshing: Promise<unknown> | undefined;
  /** Calls not answered yet, oldest first. */
  readonly #pending = new Set<PendingCall>();
  #lastRescueAt = Number.NEGATIVE_INFINITY;
  /** Runs while calls stall (unreferenced: it never keeps a process alive). */
  #watchdog: ReturnType<typeof setInterval> | undefined;

  constructor(client: NodeRedisLikeCluster) {
    this.client = client;
  }

  /** The address (`host:port`) of the master node-redis's slot map holds for the key's slot. */
  slotOwner(key: string): string | undefined {
    return hasNodes(this.client) ? this.client.slots[keySlot(key)]?.master?.address : undefined;
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    const key = String(commands[0]?.[1]);
    const multi = this.client.multi(key);
    // v4: addCommand(firstKey, args); v5: addCommand(firstKey, isReadonly, args).
    const takesReadonlyFlag = multi.addCommand.length >= 4;
    for (const command of commands) {
      const args = stringsOf(command);
      if (takesReadonlyFlag) multi.addCommand(key, false, args);
      else multi.addCommand(key, args);
    }
    const replies = multi.exec().then(checkedReplies, (error: unknown) =>
      this.#resend(error, key, (node, asking) =>
        sendTogether(node, asking, [['MULTI'], ...commands.map(stringsOf), ['EXEC']]).then(checkedReplies),
      ),
    );
    return this.#watch(key, replies);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.#script(scriptCommand('EVALSHA', sha1, keys, args), keys[0]);
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.#script(scriptCommand('EVAL', lua, keys, args), keys[0]);
  }

  /** What the client shows: only whether it is open (a cluster client has a connection per node). */
  connectionProblem(): ConnectionProblem | undefined {
    return nodeRedisConnectionProblem(this.kind, { isOpen: this.client.isOpen }, undefined);
  }

  #script(command: string[], key: string | undefined): Promise<unknown> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    const sent = this.client.sendCommand(key, false, command);
    if (key === undefined) return sent;
    return this.#watch(
      key,
      sent.catch((error: unknown) => this.#resend(error, key, (node, asking) => sendTogether(node, asking, [command]))),
    );
  }

  /** Keeps `call` among the pending calls until it settles, after checking whether the oldest one stalls. */
  #watch<T>(key: string, call: Promise<T>): Promise<T> {
    const now = performance.now();
    this.#checkForStall(now);
    const entry: PendingCall = { startedAt: now, key };
    this.#pending.add(entry);
    return call.finally(() => this.#pending.delete(entry));
  }

  /**
   * Asks another master about the oldest call's key when that call stalls.
   * Once a call stalls, a watchdog keeps checking every RESCUE_INTERVAL_MS
   * until none does, so that the slot map is re-read soon after a promotion
   * even while no new call comes (a circuit breaker that opened lets one
   * through a second).
   */
  #checkForStall(now: number): void {
    const oldest = this.#oldestPending(now);
    if (oldest === undefined || now - oldest.startedAt <= STALL_MS) return;
    if (now - this.#lastRescueAt >= RESCUE_INTERVAL_MS) {
      this.#lastRescueAt = now;
      this.#rescue(oldest.key).catch(() => undefined); // best effort: a failed rescue changes nothing
    }
    this.#watchdog ??= setInterval(() => this.#onWatchdog(), RESCUE_INTERVAL_MS).unref();
  }

  #onWatchdog(): void {
    const now = performance.now();
    const oldest = this.#oldestPending(now);
    if (oldest === undefined || now - oldest.startedAt <= STALL_MS) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
      return;
    }
    this.#checkForStall(now);
  }

  /** The oldest call still unanswered, forgetting those unanswered for FORGET_MS. */
  #oldestPending(now: number): PendingCall | undefined {
    for (const oldest of this.#pending) {
      if (now - oldest.startedAt <= FORGET_MS) return oldest;
      this.#pending.delete(oldest);
    }
    return undefined;
  }

  /**
   * Sends `EXISTS <stuck key>` through the client, routed to a master that
   * (by the client's map) does not hold the key's slot: it answers MOVED with
   * whatever the cluster now says, and node-redis re-reads its slot map.
   */
  async #rescue(stuckKey: string): Promise<void> {
    if (!hasNodes(this.client)) return;
    const stuckAt = this.client.slots[keySlot(stuckKey)]?.master?.address;
    for (let i = 0; i < 64; i++) {
      const routingKey = String(i);
      if (this.client.slots[keySlot(routingKey)]?.master?.address === stuckAt) continue;
      await this.client.sendCommand(routingKey, false, ['EXISTS', stuckKey]).catch(() => undefined);
      return;
    }
  }

  /**
   * Sends a call refused by a redirection again, on the node that holds its
   * slot, up to {@link maxRetries} times, each after a pause of
   * {@link retryPauseMs}; any other error is thrown as it is.
   */
  async #resend<T>(error: unknown, key: string, send: (node: NodeConnection, asking: boolean) => Promise<T>): Promise<T> {
    let last = error;
    for (let retry = 1; ; retry++) {
      const redirection = redirectionOf(last);
      if (redirection === undefined || retry > maxRetries(redirection) || !hasNodes(this.client)) throw last;
      await pause(retryPauseMs(retry, redirection));
      try {
        if (redirection.kind !== 'ask') await this.#refreshSlotMap(key);
        const node = await this.#nodeFor(this.client, key, redirection);
        if (node === undefined) throw last;
        return await send(node, redirection.kind === 'ask');
      } catch (next) {
        last = next;
      }
    }
  }

  /** The connection to the node a redirection named, or to the master the client holds for the key's slot. */
  async #nodeFor(cluster: ClusterNodes, key: string, redirection: Redirection): Promise<NodeConnection | undefined> {
    const address = redirection.address ?? cluster.slots[keySlot(key)]?.master?.address;
    if (address === undefined) return undefined;
    const node = cluster.nodeByAddress.get(address);
    return node === undefined ? undefined : await cluster.nodeClient(node);
  }

  /**
   * Makes the client re-read its slot map if it is stale: `EXISTS <key>`
   * through the client goes to the master its map names, which answers MOVED
   * if the slot has moved, and node-redis then re-reads the map. One at a
   * time: concurrent calls share the refresh in flight.
   */
  #refreshSlotMap(key: string): Promise<unknown> {
    this.#refreshing ??= this.client
      .sendCommand(key, false, ['EXISTS', key])
      .catch(() => undefined)
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }
}

/** Resolves after `ms` (at once for 0), without keeping the process alive. */
function pause(ms: number): Promise<void> {
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** True when a node-redis client is a cluster client (it knows its masters). */
export function isNodeRedisCluster(client: object): client is NodeRedisLikeCluster {
  return 'masters' in client;
}
