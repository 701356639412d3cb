// Structural types of the Redis clients the limiter accepts. They name only
// what the limiter uses, so that users install only the client they use and
// the library's types never import a client package.

/** One command and its arguments, the name in lower case (as ioredis's methods are named), e.g. `['zadd', key, 1, member]`. */
export type RedisCommand = readonly [name: string, ...args: (string | number)[]];

/** The part of an ioredis `Redis` or `Cluster` instance (ioredis 5 or 6, or iovalkey) the limiter uses. */
export interface IORedisLikeClient {
  /** ioredis's flag: `false` on `Redis`, `true` on `Cluster`. */
  readonly isCluster: boolean;
  /** ioredis's connection state (`'ready'` when connected), read to explain a timeout. */
  readonly status?: string;
  /** ioredis's MULTI with the commands queued up front. */
  multi(commands: (string | number)[][]): {
    /** Runs the transaction: one `[error, result]` pair per command, or `null` when it was aborted. */
    exec(): Promise<[error: Error | null, result: unknown][] | null>;
  };
  /** `EVALSHA`, as ioredis sends it. */
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `EVAL`, as ioredis sends it. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** ioredis's pipeline (present on every ioredis client; used for detection). */
  pipeline(...args: never[]): unknown;
}

/** The part of a node-redis (`redis` v4 or v5) client made by `createClient` that the limiter uses. */
export interface NodeRedisLikeClient {
  /** node-redis's connection flag (used to recognise a node-redis client; connect it yourself before use). */
  readonly isOpen: boolean;
  /** node-redis's flag for a connection ready for commands, read to explain a timeout. */
  readonly isReady?: boolean;
  /** node-redis's MULTI. */
  multi(): {
    /** Queues one command, given as its name and arguments. */
    addCommand(args: string[]): unknown;
    /** Runs the transaction and resolves with its replies. */
    exec(): Promise<unknown>;
  };
  /** Sends one command, given as its name and arguments (`EVALSHA`, `EVAL`). */
  sendCommand(args: string[]): Promise<unknown>;
}

/** The part of a node-redis (`redis` v4 or v5) cluster client made by `createCluster` that the limiter uses. */
export interface NodeRedisLikeCluster {
  /** node-redis's connection flag (used to recognise a node-redis client; connect it yourself before use). */
  readonly isOpen: boolean;
  /** The cluster's master nodes: its presence tells a cluster client from a single-server one. */
  readonly masters: unknown;
  /** node-redis's cluster MULTI, routed by `routing` (the key of the id, whose hash slot holds all its keys). */
  multi(routing?: string): {
    /** Queues one command with its first key (node-redis 4), or its first key and read-only flag (node-redis 5). */
    addCommand(...args: unknown[]): unknown;
    /** Runs the transaction and resolves with its replies. */
    exec(): Promise<unknown>;
  };
  /** Sends one command to the node that holds `firstKey` (`EVALSHA`, `EVAL`). */
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
}

/** The part of a node-redis 5 Sentinel client made by `createSentinel` that the limiter uses. */
export interface NodeRedisLikeSentinel {
  /** node-redis's connection flag (connect it yourself before use). */
  readonly isOpen: boolean;
  /** node-redis's flag for a connection to the primary ready for commands, read to explain a timeout. */
  readonly isReady?: boolean;
  /** The sentinel the client talks to (its presence tells a Sentinel client apart). */
  getSentinelNode(): unknown;
  /** The primary the sentinels name. */
  getMasterNode(): unknown;
  /** node-redis's Sentinel MULTI, sent to the primary. */
  multi(): {
    /** Queues one command: its read-only flag, then its name and arguments. */
    addCommand(isReadonly: boolean | undefined, args: string[]): unknown;
    /** Runs the transaction and resolves with its replies. */
    exec(): Promise<unknown>;
  };
  /** Sends one command (`EVALSHA`, `EVAL`); `false` sends it to the primary. */
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
}

/** The callback API of node_redis v3, as redis-mock implements it, for users' own unit tests. */
export interface CallbackRedisLikeClient {
  /** node_redis v3's connection flag (used to recognise a callback client). */
  readonly connected: boolean;
  /** MULTI with the commands queued up front. */
  multi(commands: (string | number)[][]): {
    /** Runs the transaction and calls back with one reply per command. */
    exec(callback: (error: Error | null, replies: unknown[] | null) => void): unknown;
  };
  /** `ZADD` as a method (present on every node_redis v3 client; used for detection). */
  zadd(...args: never[]): unknown;
}

/** The part of a Valkey GLIDE 2 `GlideClient` or `GlideClusterClient` the limiter uses: `customCommand`, and the members that tell it apart. */
export interface GlideLikeClient {
  /**
   * Sends one command, every argument a string; on a `GlideClusterClient`
   * with a `route` option, to the node it names (the master of a key's slot).
   */
  customCommand(args: string[], ...options: never[]): Promise<unknown>;
  /** GLIDE's batch call (present on both clients; used for detection). */
  exec(...args: never[]): Promise<unknown>;
  /** GLIDE's script call (present on both clients; used for detection). */
  invokeScript(...args: never[]): Promise<unknown>;
}

/**
 * The part of an @upstash/redis `Redis` client (Redis over HTTP, for serverless and edge runtimes) the limiter uses:
 * scripts by `evalsha`, and `eval` when the server answers NOSCRIPT. Each call is one HTTP request (or one entry of
 * the client's automatic pipeline); with `batch: true` one call carries a whole batch of decisions. Replies are read
 * whether `automaticDeserialization` is on (the default) or off.
 */
export interface UpstashLikeClient {
  /** `EVALSHA`: the script's SHA1, its keys, its arguments. */
  evalsha(sha1: string, keys: string[], args: string[]): Promise<unknown>;
  /** `EVAL`: the script's text, its keys, its arguments. */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  /** Any command by its name and arguments, for the check of the server's eviction policy (`CONFIG GET`, `INFO`). */
  exec?(args: [command: string, ...args: string[]]): Promise<unknown>;
  /** @upstash/redis's `SCRIPT LOAD` (present on every client; used for detection). */
  scriptLoad(...args: never[]): Promise<unknown>;
  /** @upstash/redis's transaction (present on every client; used for detection). */
  multi(...args: never[]): unknown;
  /** @upstash/redis's pipeline (present on every client; used for detection). */
  pipeline(...args: never[]): unknown;
}

/** A Redis client the limiter can use: ioredis, node-redis (client, cluster or sentinel), Valkey GLIDE (client or cluster client), @upstash/redis, or redis-mock. */
export type RedisClient =
  IORedisLikeClient | NodeRedisLikeClient | NodeRedisLikeCluster | NodeRedisLikeSentinel | GlideLikeClient | UpstashLikeClient | CallbackRedisLikeClient;

/** Whether `value` has each named member, of the given `typeof`: how a client is recognised without importing its library. */
export function hasMembers(value: object, members: Readonly<Record<string, 'function' | 'boolean' | 'object' | 'undefined'>>): boolean {
  const record = value as Record<string, unknown>;
  return Object.entries(members).every(([name, kind]) => typeof record[name] === kind);
}
