// This library's contenders: the MULTI path (countBlocked: true), the script
// path (countBlocked: false), the script path asked for with countBlocked:
// true (useScript: true), a three-tier stack, the Redis clock, on ioredis and
// on node-redis 5, and the in-memory store.

import type { RedisClient } from '../../src/index.js';
import { freshLibrary, type BuiltLibrary } from '../built-library.js';
import { stackTiers } from './stack-tiers.js';
import { libraryKey, type Backend, type Clients, type Contender, type Instance, type Rules } from './types.js';

const copies = new Map<string, BuiltLibrary>();

/**
 * The copy of the built library that one contender uses in every scenario and
 * every run (see ../built-library.ts): its own, made on first use, so that it
 * is warmed up once, like the library in a process that runs one configuration.
 */
function copyFor(contenderId: string): BuiltLibrary {
  let copy = copies.get(contenderId);
  if (copy === undefined) {
    copy = freshLibrary();
    copies.set(contenderId, copy);
  }
  return copy;
}

function single(
  { RollingRateLimiter }: BuiltLibrary,
  client: RedisClient | undefined,
  rules: Rules,
  namespace: string,
  extra: { countBlocked?: boolean; clock?: 'redis' },
): Instance {
  const limiter = new RollingRateLimiter({ ...rules, ...extra, ...(client === undefined ? {} : { client, namespace }) });
  return { decide: (id) => limiter.limit(id), keyOf: (id) => libraryKey(namespace, id) };
}

/**
 * Three tiers on one action, countBlocked false: per second, per minute (the
 * scenario's own rule, whatever its interval) and per day; see
 * ./stack-tiers.ts, shared with the stack's bare Lua floor. The per-minute
 * tier is the one a single limiter of the same scenario enforces.
 */
function stack({ RateLimiterStack, RollingRateLimiter }: BuiltLibrary, client: RedisClient, rules: Rules, namespace: string): Instance {
  const tiers = stackTiers(rules, namespace);
  const limiters = tiers.map((tier) => new RollingRateLimiter({ ...tier, client, countBlocked: false }));
  const stacked = new RateLimiterStack(limiters);
  return { decide: (id) => stacked.limit(id), keyOf: (id) => libraryKey(tiers[1].namespace, id) };
}

function redisContenders(client: RedisClient, backend: Backend, suffix: string, withRedisClock: boolean): Contender[] {
  const list: Contender[] = [
    {
      id: `lib-multi@${suffix}`,
      label: `this lib, MULTI path (countBlocked true), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(copyFor(`lib-multi@${suffix}`), client, rules, namespace, { countBlocked: true }),
    },
    {
      id: `lib-script@${suffix}`,
      label: `this lib, script path (countBlocked false), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(copyFor(`lib-script@${suffix}`), client, rules, namespace, { countBlocked: false }),
    },
    {
      id: `lib-script-cb@${suffix}`,
      label: `this lib, script path (countBlocked true, useScript), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => {
        // Spelled out rather than through single(): `useScript` is checked against the options type here.
        const { RollingRateLimiter } = copyFor(`lib-script-cb@${suffix}`);
        const limiter = new RollingRateLimiter({ ...rules, client, namespace, countBlocked: true, useScript: true });
        return { decide: (id) => limiter.limit(id), keyOf: (id) => libraryKey(namespace, id) };
      },
    },
    {
      id: `lib-stack3@${suffix}`,
      label: `this lib, 3-tier stack (s/min/day, countBlocked false), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => stack(copyFor(`lib-stack3@${suffix}`), client, rules, namespace),
    },
  ];
  if (!withRedisClock) return list;
  list.push(
    {
      id: `lib-redisclock@${suffix}`,
      label: `this lib, clock 'redis' (script, countBlocked true), ${backend}`,
      family: 'library',
      backend,
      create: async (rules, namespace) => single(copyFor(`lib-redisclock@${suffix}`), client, rules, namespace, { clock: 'redis' }),
    },
  );
  return list;
}

/** The library on ioredis (all five Redis modes) and on node-redis 5 (all but the Redis clock). */
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
  create: async (rules) => single(copyFor('lib-memory'), undefined, rules, '', {}),
};
