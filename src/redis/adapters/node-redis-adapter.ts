import { StoreError } from '../../errors/store-error.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';
import type { RedisAdapter } from './adapter.js';
import { hasMembers, type NodeRedisLikeClient, type NodeRedisLikeCluster, type NodeRedisLikeSentinel, type RedisCommand } from './client-types.js';
import { monitorConnection } from './connection-monitor.js';
import { execReplies } from './exec-replies.js';
import { StringCommandAdapter, stringsOf } from './node-redis-commands.js';

/** What a call takes before its command: nothing, or a Sentinel client's read-only flag (`false`: to the primary). */
type Lead = [] | [isReadonly: false];

/** The calls of a node-redis client or Sentinel client, each taking its {@link Lead} before the command. */
interface PrimaryCalls {
  multi(): { addCommand(...args: [...Lead, string[]]): unknown; exec(): Promise<unknown> };
  sendCommand(...args: [...Lead, string[]]): Promise<unknown>;
}

/**
 * {@link RedisAdapter} for a node-redis (`redis` v4 or v5) client made by
 * `createClient`, or a node-redis 5 Sentinel client made by `createSentinel`.
 * They differ in one argument: a Sentinel client's calls take a read-only
 * flag first, here always `false`, so that every call goes to the primary
 * (the client finds it through the sentinels and follows a failover itself).
 */
export class NodeRedisAdapter extends StringCommandAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeClient | NodeRedisLikeSentinel;
  readonly kind: string;
  readonly isCluster = false;
  readonly #calls: PrimaryCalls;
  readonly #lead: Lead;
  readonly #problem: (summary: string) => ConnectionProblem;

  constructor(client: NodeRedisLikeClient, sentinel?: false);
  constructor(client: NodeRedisLikeSentinel, sentinel: true);
  constructor(client: NodeRedisLikeClient | NodeRedisLikeSentinel, sentinel = false) {
    super();
    this.client = client;
    this.kind = sentinel ? 'node-redis sentinel' : 'node-redis';
    this.#calls = client as unknown as PrimaryCalls;
    this.#lead = sentinel ? [false] : [];
    this.#problem = monitorConnection(client);
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    return whenOpen(this.client, this.kind, () => {
      const multi = this.#calls.multi();
      for (const command of commands) multi.addCommand(...this.#lead, stringsOf(command));
      return multi.exec().then(execReplies);
    });
  }

  connectionProblem(): ConnectionProblem | undefined {
    return nodeRedisConnectionProblem(this.kind, this.client, this.#problem);
  }

  protected send(command: string[]): Promise<unknown> {
    return whenOpen(this.client, this.kind, () => this.#calls.sendCommand(...this.#lead, command));
  }
}

/** True when `client` looks like a node-redis v4/v5 client or cluster client. */
export function isNodeRedisClient(client: object): client is NodeRedisLikeClient | NodeRedisLikeCluster {
  return hasMembers(client, { sendCommand: 'function', multi: 'function', isOpen: 'boolean' });
}

/** True when `client` looks like a node-redis Sentinel client (which also passes for a node-redis client): it knows its sentinels. */
export function isNodeRedisSentinel(client: object): client is NodeRedisLikeSentinel {
  return hasMembers(client, { getSentinelNode: 'function', getMasterNode: 'function', sendCommand: 'function', multi: 'function' });
}

/**
 * Makes a call on a node-redis client when it is open; otherwise rejects at
 * once with a StoreError that says how to open it. The one check before every
 * call of the node-redis adapters.
 */
export function whenOpen<T>(client: { readonly isOpen: boolean }, kind: string, call: () => Promise<T>): Promise<T> {
  if (client.isOpen) return call();
  return Promise.reject(
    new StoreError(
      `The ${kind} client is not connected (isOpen is false): node-redis clients do not connect by themselves, ` +
        'so call `await client.connect()` before the first call, and do not use the client after `quit()`, `close()` or `destroy()`',
    ),
  );
}

/**
 * What is wrong with a node-redis client's connection, from `isOpen` and
 * `isReady`, or undefined when it looks ready; `problem` adds the cause.
 */
export function nodeRedisConnectionProblem(
  kind: string,
  client: { readonly isOpen: boolean; readonly isReady?: boolean },
  problem: (summary: string) => ConnectionProblem,
): ConnectionProblem | undefined {
  if (!client.isOpen) return { summary: `the ${kind} client is not connected (isOpen is false): call \`await client.connect()\` first` };
  return client.isReady === false ? problem(`the ${kind} client has lost its connection and is reconnecting (isReady is false)`) : undefined;
}
