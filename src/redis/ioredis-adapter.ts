import type { RedisAdapter } from './adapter.js';
import type { IORedisLikeClient, RedisCommand } from './client-types.js';

/** EXEC's results, from ioredis's `[error, result]` pairs; throws the first error. */
function resultsOf(replies: [error: Error | null, result: unknown][] | null): unknown[] {
  if (replies === null) throw new Error('MULTI was aborted by Redis (EXEC returned null)');
  const results: unknown[] = [];
  for (const [error, result] of replies) {
    if (error) throw error;
    results.push(result);
  }
  return results;
}

/** {@link RedisAdapter} for ioredis `Redis` and `Cluster` instances. */
export class IORedisAdapter implements RedisAdapter {
  readonly client: IORedisLikeClient;
  readonly kind: string;
  readonly supportsScripts = true;

  constructor(client: IORedisLikeClient) {
    this.client = client;
    this.kind = client.isCluster ? 'ioredis Cluster' : 'ioredis';
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    return this.client.multi(commands as unknown as (string | number)[][]).exec().then(resultsOf);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.evalsha(sha1, keys.length, ...keys, ...args);
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.eval(lua, keys.length, ...keys, ...args);
  }
}

/** True when `client` looks like an ioredis `Redis` or `Cluster` instance. */
export function isIORedisClient(client: object): client is IORedisLikeClient {
  const candidate = client as Partial<Record<'isCluster' | 'multi' | 'pipeline' | 'evalsha', unknown>>;
  return (
    typeof candidate.isCluster === 'boolean' &&
    typeof candidate.multi === 'function' &&
    typeof candidate.pipeline === 'function' &&
    typeof candidate.evalsha === 'function'
  );
}
