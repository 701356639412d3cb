// The options of RollingWindowGuard: their types with the documentation
// users read, their defaults and schema (core/check.ts), and the default key
// of a request: the signed-in user, else the client IP as the Express
// middleware reduces it (IPv6 to its /56).

import type { ExecutionContext } from '@nestjs/common';
import { describeValue, either, func, normalize, object, oneOf, optional, string, type Normalized } from '../../core/check.js';
import type { MicrosecondClock } from '../../core/clock.js';
import type { LimiterId } from '../../core/identity.js';
import type { StoreErrorPolicy } from '../../core/store-error-policy.js';
import { HEADER_DEFAULTS, HEADER_SCHEMA, type RateLimitHeaderStyle } from '../../http/headers.js';
import { DEFAULT_IPV6_SUBNET, ipv6SubnetOption, ipWithoutPort, reduceIp, type Ipv6Subnet } from '../../http/ip-key.js';
import type { RedisClient } from '../../redis/adapters/client-types.js';
import { storeErrorPolicy } from '../../options/limiter-options.js';
import { ownOptions } from '../../options/own-options.js';

/**
 * The id a request is limited by, from the request (Express's or Fastify's,
 * as the platform gives it) and Nest's execution context. `undefined`,
 * `null` or `''` is refused (a `TypeError`, which Nest answers with a 500).
 */
export type RateLimitKeyFunction = (request: any, context: ExecutionContext) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>; // eslint-disable-line @typescript-eslint/no-explicit-any -- Express's or Fastify's request

/** Options of {@link RollingWindowGuard}. */
export interface RollingWindowGuardOptions {
  /**
   * The Redis client that holds the limits, shared by every process that
   * uses it: ioredis (`Redis` or `Cluster`), node-redis v4+ or redis-mock.
   * Omitted: this process's memory (each guard instance its own).
   */
  readonly client?: RedisClient | undefined;
  /**
   * Prefix of every limit's keys: a handler's limit counts under
   * `<namespace>:<name>` (see {@link RateLimitRule.name}).
   * @default 'nest-rate-limit'
   */
  readonly namespace?: string;
  /**
   * The id a request is limited by. Default: the signed-in user,
   * `user:<request.user.id>`, when `request.user.id` is a non-empty string or
   * a finite number (as Passport and most auth guards leave it; bind this
   * guard after yours); else the client IP, `ip:<address>`, as
   * {@link ipKey} reduces it: an IPv6 address to its /56 prefix (see
   * `ipv6Subnet`), an IPv4-mapped one to IPv4. Behind a proxy, let the
   * platform trust it (`app.set('trust proxy', 1)` on Express,
   * `new FastifyAdapter({ trustProxy: 1 })` on Fastify), or every client
   * shares the proxy's limit.
   */
  readonly key?: RateLimitKeyFunction;
  /** How much of an IPv6 address is one client, for the default key; see {@link ipKey}. @default 56 */
  readonly ipv6Subnet?: Ipv6Subnet;
  /** Which rate-limit headers every limited response gets; see {@link RateLimitHeaderStyle}. @default 'draft' */
  readonly headers?: RateLimitHeaderStyle;
  /** The limiters' clock: `'local'`, `'redis'` or a function returning integer microseconds. @default 'local' */
  readonly clock?: 'local' | 'redis' | MicrosecondClock;
  /** What a store failure does: the limiters' `onStoreError` (`'throw'`: the guard rejects, a 500). @default 'throw' */
  readonly onStoreError?: StoreErrorPolicy;
}

/** The defaults of {@link RollingWindowGuardOptions} (`key`: the user, else the client IP). */
const GUARD_DEFAULTS = Object.freeze({
  namespace: 'nest-rate-limit',
  ipv6Subnet: DEFAULT_IPV6_SUBNET,
  headers: HEADER_DEFAULTS.headers,
  clock: 'local',
} as const);

const GUARD_SCHEMA = {
  client: optional(object<RedisClient>('a Redis client object'), undefined),
  namespace: optional(string, GUARD_DEFAULTS.namespace),
  key: optional(func<RateLimitKeyFunction>(), undefined),
  ipv6Subnet: ipv6SubnetOption,
  headers: HEADER_SCHEMA.headers,
  clock: optional(
    either(func<MicrosecondClock>(), oneOf(['local', 'redis'] as const), (value) => typeof value === 'function'),
    GUARD_DEFAULTS.clock,
  ),
  onStoreError: storeErrorPolicy,
};

/** {@link RollingWindowGuardOptions} once checked, every default filled in. */
export type NormalizedGuardOptions = Normalized<typeof GUARD_SCHEMA>;

/** Checks the guard's options once, without touching the caller's object (its own properties only: an inherited one is ignored). */
export function normalizeGuardOptions(options: RollingWindowGuardOptions): NormalizedGuardOptions {
  return normalize(ownOptions(options), GUARD_SCHEMA, 'the RollingWindowGuard options', { allowMissing: true });
}

/** The request fields the default key reads, on Express and on Fastify. */
interface KeyedRequest {
  readonly user?: { readonly id?: unknown } | null;
  readonly ip?: string;
  readonly socket?: { readonly remoteAddress?: string };
}

/** The default key: `user:<id>` for a signed-in user, else `ip:<reduced client IP>`; undefined when the client is gone. */
export function createDefaultKey(ipv6Subnet: Ipv6Subnet): (request: KeyedRequest) => string | undefined {
  return (request) => {
    const id = request.user?.id;
    if ((typeof id === 'string' && id !== '') || (typeof id === 'number' && Number.isFinite(id))) return `user:${id}`;
    const address = request.ip ?? request.socket?.remoteAddress;
    if (address === undefined || address === '') return undefined;
    const ip = ipWithoutPort(address);
    if (ip === undefined) {
      throw new TypeError(
        `RollingWindowGuard: the request's IP is ${describeValue(address)}, which is not an IP address: check the proxy settings, or give a \`key\` function`,
      );
    }
    return `ip:${reduceIp(ip, ipv6Subnet)}`;
  };
}
