import type { ConnectionProblem } from '../../errors/timeout-error.js';
import type { RedisAdapter } from './adapter.js';
import { monitorConnection } from './connection-monitor.js';
import { hasMembers, type IORedisLikeClient, type RedisCommand } from './client-types.js';
import { execReplies } from './exec-replies.js';
import { keySlot } from './key-slot.js';

/**
 * ioredis's script commands as called here: the keys and arguments in one
 * array, which ioredis flattens into the command. Spread into the call
 * instead, a large batch's hundred thousand arguments would overflow the stack.
 */
interface ArrayArgumentsClient {
  evalsha(sha1: string, numkeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(script: string, numkeys: number, keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** ioredis's way to send any command by its name (on a `Cluster`, one without a key goes to a node of its choice). */
interface AnyCommandClient {
  call(name: string, ...args: (string | number)[]): Promise<unknown>;
}

/** {@link RedisAdapter} for ioredis `Redis` and `Cluster` instances. */
export class IORedisAdapter implements RedisAdapter {
  readonly client: IORedisLikeClient;
  readonly kind: string;
  readonly isCluster: boolean;
  readonly supportsScripts = true;
  readonly #problem: (summary: string) => ConnectionProblem;

  constructor(client: IORedisLikeClient) {
    this.client = client;
    this.isCluster = client.isCluster === true;
    this.kind = this.isCluster ? 'ioredis Cluster' : 'ioredis';
    this.#problem = monitorConnection(client);
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    // ioredis answers `[error, result]` pairs (or `null` when aborted): one reply (or error) each for execReplies.
    const multi = this.client.multi(commands as unknown as (string | number)[][]);
    return multi.exec().then((pairs) => execReplies(pairs && pairs.map(([error, result]) => error ?? result)));
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    // Every argument a string or number: ioredis then writes the command as one string. A Buffer argument would
    // switch it to assembling a Buffer piece by piece, which costs the client twice as much per argument at every
    // size from 64 arguments to 50,000 (a batch's), measured on Node 20.
    return (this.client as unknown as ArrayArgumentsClient).evalsha(sha1, keys.length, [...keys, ...args]);
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return (this.client as unknown as ArrayArgumentsClient).eval(lua, keys.length, [...keys, ...args]);
  }

  /** One command without a key, by ioredis's `call`: on a `Cluster`, to a node ioredis picks. */
  serverCommand([name, ...args]: RedisCommand): Promise<unknown> {
    return (this.client as unknown as AnyCommandClient).call(name, ...args);
  }

  /** On a `Cluster`: the first node key (`host:port`, the master) ioredis's slot map lists for the key's slot. */
  slotOwner(key: string): string | undefined {
    if (!this.isCluster) return undefined;
    const { slots } = this.client as { slots?: ArrayLike<readonly string[] | undefined> };
    return slots?.[keySlot(key)]?.[0];
  }

  /** From ioredis's `status`: anything but `'ready'` means the client is not connected. */
  connectionProblem(): ConnectionProblem | undefined {
    const { status } = this.client;
    if (status === undefined || status === 'ready') return undefined;
    return this.#problem(`the ${this.kind} client is not connected (status "${status}")${STATUS_HINTS[status] ?? ''}`);
  }
}

/** What an ioredis status other than `'ready'` means for the caller. */
const STATUS_HINTS: Readonly<Record<string, string>> = {
  wait: ': it was made with `lazyConnect` and has not connected yet',
  end: ': it was closed with `quit()` or `disconnect()` and will not reconnect',
  reconnecting: ': it lost its connection and is reconnecting',
  connecting: ': it is connecting',
  connect: ': it is connected but not ready yet (handshake, authentication or cluster discovery)',
  close: ': it lost its connection',
};

/** True when `client` looks like an ioredis `Redis` or `Cluster` instance. */
export function isIORedisClient(client: object): client is IORedisLikeClient {
  return hasMembers(client, { isCluster: 'boolean', multi: 'function', pipeline: 'function', evalsha: 'function' });
}
