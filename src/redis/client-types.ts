// Structural types of the Redis clients the limiter accepts. They name only
// what the limiter uses, so that users install only the client they use and
// the library's types never import a client package.

/** One command and its arguments, the name in lower case (as ioredis's methods are named), e.g. `['zadd', key, 1, member]`. */
export type RedisCommand = readonly [name: string, ...args: (string | number)[]];

/**
 * The part of an ioredis `Redis` or `Cluster` instance (ioredis 5 or 6) the
 * limiter uses: `multi(commands).exec()`, `evalsha`, `eval`, and the
 * `isCluster` flag that tells ioredis apart.
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

/** The part of a node-redis (`redis` v4 or v5) client made by `createClient` that the limiter uses. */
export interface NodeRedisLikeClient {
  readonly isOpen: boolean;
  multi(): { addCommand(args: string[]): unknown; exec(): Promise<unknown> };
  sendCommand(args: string[]): Promise<unknown>;
}

/** The part of a node-redis (`redis` v4 or v5) cluster client made by `createCluster` that the limiter uses. */
export interface NodeRedisLikeCluster {
  readonly isOpen: boolean;
  readonly masters: unknown;
  multi(routing?: string): { addCommand(...args: unknown[]): unknown; exec(): Promise<unknown> };
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
}

/** The callback API of node_redis v3, as redis-mock implements it, for users' own unit tests. */
export interface CallbackRedisLikeClient {
  readonly connected: boolean;
  multi(commands: (string | number)[][]): { exec(callback: (error: Error | null, replies: unknown[] | null) => void): unknown };
  zadd(...args: never[]): unknown;
}

/** A Redis client the limiter can use: ioredis, node-redis (client or cluster), or redis-mock. */
export type RedisClient = IORedisLikeClient | NodeRedisLikeClient | NodeRedisLikeCluster | CallbackRedisLikeClient;
