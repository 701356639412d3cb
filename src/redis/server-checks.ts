// What the library checks of the Redis server itself, once per client, beside
// its first call: a server that may evict keys (any `maxmemory-policy` but
// `noeviction`) drops windows under memory pressure, and an id that used up
// its limit is then admitted again, silently. Such a server is named in a
// warning (`process.emitWarning` where there is a `process`, and the warning
// channel), never an error: the limiter still works, and the fix is the
// server's configuration.

import { emitWarning } from '../core/diagnostics.js';
import type { RedisAdapter } from './adapters/adapter.js';
import type { RedisCommand } from './adapters/client-types.js';

/** Codes of the warnings about the Redis server (`warning.code`, `process.on('warning')`, and the warning channel). */
export const SERVER_WARNING_CODES = {
  /** The server's `maxmemory-policy` is not `noeviction`: under memory pressure it may evict a window, and admit again an id that used up its limit. */
  evictingPolicy: 'RATE_LIMITER_EVICTING_POLICY',
} as const;

/** The check of each client seen so far, settled when it is over; weak, so that a dropped client is collected. */
const checks = new WeakMap<object, Promise<void>>();

/**
 * Checks, once per client, that its server does not evict keys, and warns
 * (once) when it may. Call it beside a call to the store, after sending it:
 * the check goes on its own, never delays or fails a decision, and ignores
 * its own errors. It reads `CONFIG GET maxmemory-policy`, or `INFO memory`
 * where the server refuses `CONFIG` (managed servers often do); it stays
 * silent when both are refused, and for a client that is no server
 * (redis-mock). On a Cluster it asks the one node the client sends a keyless
 * command to, taking the nodes to be configured alike.
 *
 * @returns The check of this client, which resolves when it is over and never rejects.
 */
export function checkServerOnce(redis: RedisAdapter): Promise<void> {
  let check = checks.get(redis.client);
  if (check === undefined) {
    check = evictionPolicyOf(redis).then(
      (policy) => {
        if (policy !== undefined && policy !== 'noeviction') warnEvicting(redis, policy);
      },
      () => undefined,
    );
    checks.set(redis.client, check);
  }
  return check;
}

/** The server's `maxmemory-policy`, by `CONFIG GET`, else by `INFO memory`; undefined when neither tells. */
async function evictionPolicyOf(redis: RedisAdapter): Promise<string | undefined> {
  if (redis.serverCommand === undefined) return undefined;
  const ask = (command: RedisCommand): Promise<string | undefined> =>
    Promise.resolve()
      .then(() => redis.serverCommand?.(command))
      .then(policyIn, () => undefined);
  return (await ask(['config', 'get', 'maxmemory-policy'])) ?? ask(['info', 'memory']);
}

/**
 * The policy in a reply of `CONFIG GET maxmemory-policy` or `INFO memory`,
 * in whatever shape the client gave it: `['maxmemory-policy', policy]`
 * (RESP2), `{ 'maxmemory-policy': policy }` (a RESP3 map), GLIDE's
 * `[{ key, value }]`, or INFO's text with its `maxmemory_policy:` line; also
 * inside a reply per node (a Cluster client asked every node), the first found.
 */
export function policyIn(reply: unknown): string | undefined {
  if (typeof reply === 'string') return /^maxmemory_policy:([\w-]+)/m.exec(reply)?.[1];
  if (reply instanceof Uint8Array) return policyIn(new TextDecoder().decode(reply));
  if (Array.isArray(reply)) {
    const at = reply.findIndex((item) => textOf(item) === 'maxmemory-policy');
    if (at >= 0 && at + 1 < reply.length) return textOf(reply[at + 1]);
    return firstOf(reply);
  }
  if (reply instanceof Map) return policyIn(Object.fromEntries(reply));
  if (typeof reply === 'object' && reply !== null) {
    const record = reply as Record<string, unknown>;
    if ('key' in record && 'value' in record) return textOf(record.key) === 'maxmemory-policy' ? textOf(record.value) : policyIn(record.value);
    if ('maxmemory-policy' in record) return textOf(record['maxmemory-policy']);
    return firstOf(Object.values(record));
  }
  return undefined;
}

/** The first policy found in the items. */
function firstOf(items: readonly unknown[]): string | undefined {
  for (const item of items) {
    const policy = policyIn(item);
    if (policy !== undefined) return policy;
  }
  return undefined;
}

/** A reply's text: a string as it is, bytes decoded, anything else undefined. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return value instanceof Uint8Array ? new TextDecoder().decode(value) : undefined;
}

/** The warning about an evicting server, given to `process.emitWarning` (where there is one) and the warning channel. */
function warnEvicting(redis: RedisAdapter, policy: string): void {
  const where = redis.isCluster ? 'A node of the Redis Cluster' : 'The Redis server';
  const message =
    `${where} of this rate limiter's ${redis.kind} client evicts keys when its memory is full (maxmemory-policy ${policy}): ` +
    'it may drop a rate limit window, and an id that used up its limit is then admitted again. ' +
    'Set `maxmemory-policy noeviction` on the server (on every node of a Cluster), or keep the limiter on a Redis of its own that does not evict.';
  emitWarning(SERVER_WARNING_CODES.evictingPolicy, message, redis.kind);
}
