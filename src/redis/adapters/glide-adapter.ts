// The adapter for Valkey GLIDE 2 clients (`GlideClient`, `GlideClusterClient`),
// recognised by their members: the library never imports GLIDE (docs/guides/
// deployment.md, "Clients", and redis-cluster.md say what differs). Scripts go as
// `customCommand(['EVALSHA', …])` rather than through GLIDE's `Script` class,
// which would need a `release()` per script object; a transaction is one call
// of the atomic block script. On a cluster every call is routed to the master
// of its first key's slot, and sent again when GLIDE gives up on a
// redirection (after MOVED, to the master it names). GLIDE's rewritten error codes (`NOSCRIPT …` arrives as
// `… - NoScriptError: …`) get their Redis form back.

import type { RedisAdapter } from './adapter.js';
import { hasMembers, type GlideLikeClient, type RedisCommand } from './client-types.js';
import { retryRedirected } from './cluster-redirection.js';
import { execReplies } from './exec-replies.js';
import { GlideSlotMap } from './glide-slot-map.js';
import { StringCommandAdapter, stringsOf } from './node-redis-commands.js';
import { ATOMIC_BLOCK_SCRIPT } from '../scripts/atomic-block-script.js';
import { runScript } from './run-script.js';

/** Where a cluster call goes: the master of a key's slot by GLIDE's map, or the node at an address. */
type GlideRoute = { type: 'primarySlotKey'; key: string } | { type: 'routeByAddress'; host: string; port: number };

/** `customCommand` with GLIDE's options: a route on a cluster client, none on a standalone one. */
interface GlideCalls {
  customCommand(args: string[], options?: { route: GlideRoute }): Promise<unknown>;
}

/** The route to the node of a `MOVED` answer's `host:port` (an IPv6 host has colons of its own). */
function routeTo(address: string): GlideRoute {
  const colon = address.lastIndexOf(':');
  return { type: 'routeByAddress', host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
}

/** GLIDE's wording of a server error: `An error was signalled by the server: - <Kind>: <message>`. */
const SERVER_ERROR = /^An error was signalled by the server: - (\w+): (.*)$/s;

/** The Redis error code of each kind of GLIDE error that the library reads. */
const REDIS_CODES: Readonly<Record<string, string>> = {
  NoScriptError: 'NOSCRIPT',
  PermissionDenied: 'NOPERM',
  Moved: 'MOVED',
  Ask: 'ASK',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
};

/** A GLIDE error the library reads, in the words Redis used (`NOSCRIPT …`), caused by GLIDE's; any other error as it is. */
export function redisErrorOf(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const match = SERVER_ERROR.exec(error.message);
  const code = match === null ? undefined : REDIS_CODES[match[1] as string];
  return code === undefined ? error : new Error(`${code} ${match?.[2] ?? ''}`, { cause: error });
}

/** {@link RedisAdapter} for Valkey GLIDE 2's `GlideClient` and `GlideClusterClient`. */
export class GlideAdapter extends StringCommandAdapter implements RedisAdapter {
  readonly client: GlideLikeClient;
  readonly kind: string;
  readonly isCluster: boolean;
  readonly #calls: GlideCalls;
  readonly #slots: GlideSlotMap | undefined;

  constructor(client: GlideLikeClient) {
    super();
    this.client = client;
    this.#calls = client;
    this.isCluster = isGlideCluster(client);
    this.kind = this.isCluster ? 'Valkey GLIDE cluster' : 'Valkey GLIDE';
    this.#slots = this.isCluster ? new GlideSlotMap(client) : undefined;
  }

  /** The commands in one call of the atomic block script, keyed (and on a cluster routed) by the first command's key. */
  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    const args = commands.flatMap((command) => [String(command.length), ...stringsOf(command)]);
    return runScript(this, ATOMIC_BLOCK_SCRIPT, [String(commands[0]?.[1] ?? '')], args, execReplies);
  }

  /** On a cluster: the master (`host:port`) the cluster named for the key's slot at the last read of its slot map (at most about a second ago). */
  slotOwner(key: string): string | undefined {
    return this.#slots?.ownerOf(key);
  }

  protected send(command: string[], key: string | undefined): Promise<unknown> {
    if (!this.isCluster || key === undefined) return this.#calls.customCommand(command).catch(throwRedisError);
    const bySlot: GlideRoute = { type: 'primarySlotKey', key };
    const send = (route: GlideRoute): Promise<unknown> => this.#calls.customCommand(command, { route }).catch(throwRedisError);
    // MOVED names the master that holds the slot now: the call goes there, whatever GLIDE's map says until GLIDE
    // reads it again (which, under load, took longer than the retries last).
    return send(bySlot)
      .catch((error: unknown) => retryRedirected(error, (redirection) => send(redirection.kind === 'moved' ? routeTo(redirection.address) : bySlot)))
      .catch((error: unknown) => {
        this.#slots?.markStale();
        throw error;
      });
  }
}

function throwRedisError(error: unknown): never {
  throw redisErrorOf(error);
}

/** True when `client` looks like a Valkey GLIDE `GlideClient` or `GlideClusterClient`. */
export function isGlideClient(client: object): client is GlideLikeClient {
  return hasMembers(client, { customCommand: 'function', exec: 'function', invokeScript: 'function' });
}

/** True when a GLIDE client is a `GlideClusterClient` (it has the cluster-only `invokeScriptWithRoute`). */
function isGlideCluster(client: GlideLikeClient): boolean {
  return hasMembers(client, { invokeScriptWithRoute: 'function' });
}
