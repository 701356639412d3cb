// This library's contenders: the MULTI path (countBlocked: true), the script
// path (countBlocked: false), a three-tier stack, the Redis clock, on ioredis
// and on node-redis 5, and the in-memory store.

import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../src/index.js';
import { libraryKey, type Backend, type Clients, type Contender, type Instance, type Rules } from './types.js';

const DAY_MS = 86_400_000;

function single(client: RedisClient | undefined, rules: Rules, namespace: string, extra: { countBlocked?: boolean; clock?: 'redis' }): Instance {
  const limiter = new RollingRateLimiter({ ...rules, ...extra, ...(client === undefined ? {} : { client, namespace }) });
  return { decide: (id) => limiter.limit(id), keyOf: (id) => libraryKey(namespace, id) };
}

/**
 * Three tiers on one action, countBlocked false: per second, per minute (the
 * scenario's own rule, whatever its interval) and per day. The per-minute tier
 * is the one a single limiter of the same scenario enforces.
 */
function stack(client: RedisClient, rules: Rules, namespace: string): Instance {
  const tier = (suffix: string, interval: number, maxInInterval: number): RollingRateLimiter =>
    new RollingRateLimiter({ client, namespace: `${namespace}-${suffix}`, interval, maxInInterval, countBlocked: false });
  const limiters = [
    tier('second', 1_000, Math.max(1, Math.floor(rules.maxInInterval / 2))),
    new RollingRateLimiter({ ...rules, client, namespace: `${namespace}-minute`, countBlocked: false }),
    tier('day', DAY_MS, rules.maxInInterval * 100),
  ];
  const tiers = new RateLimiterStack(limiters);
  return { decide: (id) => tiers.limit(id), keyOf: (id) => libraryKey(`${namespace}-minute`, id) };
}

function redisContenders(client: RedisClient, backend: Backend, suffix: string, all: boolean): Contender[] {
  const list: Contender[] = [
    {
      id: `lib-multi@${suffix}`,
      label: `this lib, MULTI path (countBlocked true), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(client, rules, namespace, { countBlocked: true }),
    },
    {
      id: `lib-script@${suffix}`,
      label: `this lib, script path (countBlocked false), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(client, rules, namespace, { countBlocked: false }),
    },
  ];
  if (!all) return list;
  list.push(
    {
      id: `lib-stack3@${suffix}`,
      label: `this lib, 3-tier stack (s/min/day, countBlocked false), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => stack(client, rules, namespace),
    },
    {
      id: `lib-redisclock@${suffix}`,
      label: `this lib, clock 'redis' (script, countBlocked true), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(client, rules, namespace, { clock: 'redis' }),
    },
  );
  return list;
}

/** The library on ioredis (all four Redis modes) and on node-redis 5 (both paths). */
export function libraryRedisContenders(clients: Clients): Contender[] {
  return [
    ...redisContenders(clients.ioredis, 'ioredis', 'ioredis', true),
    ...redisContenders(clients.nodeRedis, 'node-redis 5', 'node-redis5', false),
  ];
}

/** The in-memory store (no client, default options). */
export const libraryMemoryContender: Contender = {
  id: 'lib-memory',
  label: 'this lib, in-memory store',
  family: 'library',
  backend: 'memory',
  create: async (rules) => single(undefined, rules, '', {}),
};
