import { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import type { RedisScript } from './redis-script.js';

/** True for Redis's answer to EVALSHA when the script is not in its cache. */
function isNoScriptError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** True for Redis's answer when an ACL forbids the command to this user. */
function isNoPermissionError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOPERM');
}

/** Says which permission is missing and what to do, keeping Redis's own error as the cause. */
function missingPermission(error: Error): StoreError {
  return new StoreError(
    `Redis refused EVALSHA/EVAL to this user (ACL: "${error.message}"). ` +
      'The limiter decides with a Lua script by default: grant them ' +
      '(`ACL SETUSER <user> +evalsha +eval`), or use `useScript: false` (plain commands, for `countBlocked: true` with a local clock)',
    { cause: error },
  );
}

/** A refusal for lack of permission, explained; any other error as it is. */
function explained(error: unknown): unknown {
  return isNoPermissionError(error) ? missingPermission(error as Error) : error;
}

/**
 * Runs a script by its SHA1, and sends the whole text once when Redis does not
 * know it (after a restart, a `SCRIPT FLUSH`, a failover to a fresh replica),
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
    if (!isNoScriptError(error)) throw explained(error);
    return redis.eval(script.lua, keys, args).then(read, (retryError: unknown) => {
      throw explained(retryError);
    });
  });
}
