// The other libraries, built as their READMEs and types say, with the same
// rules as this library's contenders:
//   rolling-rate-limiter 0.4.2: IORedisRateLimiter / InMemoryRateLimiter with
//     the same interval, maxInInterval and minDifference (key = namespace + id);
//   rate-limiter-flexible 11: RateLimiterRedis (ioredis, useRedisPackage false)
//     / RateLimiterMemory with points = maxInInterval and duration = interval in
//     seconds. It is a fixed-window counter, not a rolling window: cheaper work,
//     different guarantees; it is here as a yardstick, not as an equal.

import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { InMemoryRateLimiter, IORedisRateLimiter } from 'rolling-rate-limiter';
import type { Clients, Contender, Instance, Rules } from './types.js';

function flexible(limiter: RateLimiterAbstract, keyOf?: (id: string) => string): Instance {
  const blocked = (reason: unknown): boolean => {
    if (reason instanceof RateLimiterRes) return true;
    throw reason instanceof Error ? reason : new Error(String(reason));
  };
  return {
    decide: (id) => limiter.consume(id).then(() => false, blocked),
    ...(keyOf === undefined ? {} : { keyOf }),
  };
}

function seconds(rules: Rules): number {
  return Math.max(1, Math.round(rules.interval / 1000));
}

/** rolling-rate-limiter and rate-limiter-flexible on the shared ioredis client. */
export function peerRedisContenders(clients: Clients): Contender[] {
  return [
    {
      id: 'rrl@ioredis',
      label: 'rolling-rate-limiter 0.4.2, IORedisRateLimiter',
      family: 'peer',
      backend: 'ioredis',
      create: async (rules, namespace) => {
        const limiter = new IORedisRateLimiter({ client: clients.ioredis, namespace: `${namespace}:`, ...rules });
        return { decide: (id) => limiter.limit(id), keyOf: (id) => `${namespace}:${id}` };
      },
    },
    {
      id: 'rlf@ioredis',
      label: 'rate-limiter-flexible 11.4, RateLimiterRedis (fixed window)',
      family: 'peer',
      backend: 'ioredis',
      create: async (rules, namespace) =>
        flexible(
          new RateLimiterRedis({
            storeClient: clients.ioredis,
            useRedisPackage: false,
            keyPrefix: namespace,
            points: rules.maxInInterval,
            duration: seconds(rules),
          }),
          (id) => `${namespace}:${id}`,
        ),
    },
  ];
}

/** rolling-rate-limiter's and rate-limiter-flexible's in-process limiters. */
export const peerMemoryContenders: readonly Contender[] = [
  {
    id: 'rrl-memory',
    label: 'rolling-rate-limiter 0.4.2, InMemoryRateLimiter',
    family: 'peer',
    backend: 'memory',
    create: async (rules) => {
      const limiter = new InMemoryRateLimiter(rules);
      return {
        decide: (id) => limiter.limit(id),
        // One un-unref'd timer per id would keep the process alive for `interval`.
        dispose: () => {
          for (const timer of Object.values(limiter.ttls)) clearTimeout(timer);
          limiter.ttls = {};
          limiter.storage = {};
        },
      };
    },
  },
  {
    id: 'rlf-memory',
    label: 'rate-limiter-flexible 11.4, RateLimiterMemory (fixed window)',
    family: 'peer',
    backend: 'memory',
    create: async (rules, namespace) =>
      flexible(new RateLimiterMemory({ keyPrefix: namespace, points: rules.maxInInterval, duration: seconds(rules) })),
  },
];
