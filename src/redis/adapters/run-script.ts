import { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from './adapter.js';
import type { RedisScript } from '../scripts/redis-script.js';

/** Redis's refusal of the script commands by an ACL, explained with what to do (Redis's error as the cause); any other error as it is. */
function explained(error: unknown): unknown {
  if (!(error instanceof Error && error.message.startsWith('NOPERM'))) return error;
  return new StoreError(
    `Redis refused EVALSHA/EVAL to this user (ACL: "${error.message}"). ` +
      'The limiter decides with a Lua script by default: grant them ' +
      '(`ACL SETUSER <user> +evalsha +eval`), or use `useScript: false` (plain commands, for `countBlocked: true` with a local clock)',
    { cause: error },
  );
}

/**
 * Runs a script by its SHA1, and sends the whole text once when Redis answers
 * NOSCRIPT (after a restart, a `SCRIPT FLUSH`, a failover to a fresh replica),
 * which also loads it for the next calls. The reply is handed to `read`, in
 * the same step: a plain promise chain rather than an `async` function,
 * because this runs on every decision and each step costs.
 */
export function runScript<T>(
  redis: RedisAdapter,
  script: RedisScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  read: (reply: unknown) => T,
): Promise<T> {
  return redis.evalsha(script.sha1, keys, args).then(read, (error: unknown) => {
    if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw explained(error);
    return redis.eval(script.lua, keys, args).then(read, (retryError: unknown) => {
      throw explained(retryError);
    });
  });
}
