import type { RedisAdapter } from './adapter.js';
import type { RedisScript } from './scripts/redis-script.js';

/** True for Redis's answer to EVALSHA when the script is not in its cache. */
function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Runs a script by its SHA1, and sends the whole text once when Redis does not
 * know it (after a restart, a `SCRIPT FLUSH`, a failover to a fresh replica),
 * which also loads it for the next calls.
 */
export async function runScript(
  redis: RedisAdapter,
  script: RedisScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha1, keys, args);
  } catch (error) {
    if (!isNoScriptError(error)) throw error;
    return redis.eval(script.lua, keys, args);
  }
}
