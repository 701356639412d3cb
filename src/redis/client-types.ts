// Structural types of the Redis clients the limiter accepts. They name only
// what the limiter uses, so that users install only the client they use and
// the library's types never import a client package.

/** One command and its arguments, the name in lower case (as ioredis's methods are named), e.g. `['zadd', key, 1, member]`. */
export type RedisCommand = readonly [name: string, ...args: (string | number)[]];

/**
 * The part of an ioredis `Redis` or `Cluster` instance the limiter uses:
 * `multi(commands).exec()`, `evalsha`, `eval`, and the `isCluster` flag
 * that tells ioredis apart.
 */
export interface IORedisLikeClient {
  /** ioredis's flag: `false` on `Redis`, `true` on `Cluster`. */
  readonly isCluster: boolean;
  /** ioredis's MULTI with the commands queued up front. */
  multi(commands: (string | number)[][]): { exec(): Promise<[error: Error | null, result: unknown][] | null> };
  /** `EVALSHA`, as ioredis sends it. */
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `EVAL`, as ioredis sends it. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** ioredis's pipeline (present on every ioredis client; used for detection). */
  pipeline(...args: never[]): unknown;
}

/** A Redis client the limiter can use. */
export type RedisClient = IORedisLikeClient;
