// What the harness knows about a contender: a name, where it keeps state, and
// a factory that builds a fresh instance on a fresh namespace for one
// measurement. Every contender answers the same question per call: blocked?

import type { Redis } from 'ioredis';
import type { createClient } from 'redis5';

/** The rules every contender of one measurement is built with (rolling-rate-limiter's names). */
export interface Rules {
  /** Window length, ms. */
  readonly interval: number;
  readonly maxInInterval: number;
  /** Least gap between actions, ms (0: none). */
  readonly minDifference: number;
}

/** A node-redis 5 client from `createClient`. */
export type NodeRedis5 = ReturnType<typeof createClient>;

/** The connections the contenders share (one per client library, opened once per bench run). */
export interface Clients {
  readonly ioredis: Redis;
  readonly nodeRedis: NodeRedis5;
}

export type Backend = 'ioredis' | 'node-redis 5' | 'memory';
export type Family = 'library' | 'peer' | 'floor';

/** One contender built for one measurement. */
export interface Instance {
  /** One decision for `id`: resolves true when blocked. */
  readonly decide: (id: string) => Promise<boolean>;
  /** The Redis key holding `id` (Redis contenders), for MEMORY USAGE and pre-filling. */
  readonly keyOf?: (id: string) => string;
  /** Releases what the instance holds (timers of in-memory peers). */
  readonly dispose?: () => void;
}

export interface Contender {
  /** Stable identifier used in results and targets, e.g. `lib-multi@ioredis`. */
  readonly id: string;
  /** What the reader sees. */
  readonly label: string;
  readonly family: Family;
  readonly backend: Backend;
  /** Builds a fresh instance; `namespace` is unique to this measurement. */
  create(rules: Rules, namespace: string): Promise<Instance>;
}

/** The key layout of this library and of the floors: `<namespace>:{<id>}` (ids here need no escaping). */
export function libraryKey(namespace: string, id: string): string {
  return `${namespace}:{${id}}`;
}
