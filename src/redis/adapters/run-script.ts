import { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from './adapter.js';
import { ATOMIC_BLOCK_SCRIPT } from '../scripts/atomic-block-script.js';
import type { RedisScript } from '../scripts/redis-script.js';

/**
 * A server's answer that it cannot run scripts at all: EVALSHA/EVAL are unknown to it (renamed away, or left out
 * by a proxy: Redis and Valkey answer `ERR unknown command 'evalsha', …`), a proxy refuses them, or, on Valkey 9.1
 * and later built without its Lua module, EVAL finds no engine (`ERR Could not find scripting engine 'lua'`, after
 * EVALSHA's NOSCRIPT). An error raised inside a running script (`… from script …`) is not one.
 */
const NO_SCRIPTING = /\b(?:unknown|unsupported) command\b|could not find scripting engine|\beval(?:sha)?\b.*\bnot (?:supported|allowed)\b/i;
const INSIDE_A_SCRIPT = /from script|user_script/i;

/** A server's error without the arguments it quotes (`, with args beginning with: …`: the keys, so the ids), which stay in the cause. */
function withoutArguments(message: string): string {
  return message.replace(/,? with args beginning with:[\s\S]*$/, '').trim();
}

/** What to do about a server that cannot run scripts, for the script that needed them. */
function withoutScripting(script: RedisScript): string {
  return script === ATOMIC_BLOCK_SCRIPT
    ? 'This client runs even a transaction (`useScript: false`, `clear`, `undo`) as a script, so `useScript: false` does not help: ' +
        'use a server with scripting, or a client whose transactions are plain MULTI/EXEC (ioredis, node-redis) with `useScript: false` ' +
        '(plain commands, for `countBlocked: true` with a local clock)'
    : 'The limiter decides with a Lua script by default: use a server with scripting, or `useScript: false` ' +
        '(plain commands in a MULTI, for `countBlocked: true` with a local clock)';
}

/**
 * The server's refusal of the script commands, explained with what to do (the server's error as the cause): by an
 * ACL (NOPERM), or because it cannot run scripts at all; any other error as it is.
 */
function explained(error: unknown, redis: RedisAdapter, script: RedisScript): unknown {
  if (!(error instanceof Error)) return error;
  if (error.message.startsWith('NOPERM')) {
    return new StoreError(
      `Redis refused EVALSHA/EVAL to this user (ACL: "${error.message}"). ` +
        'The limiter decides with a Lua script by default: grant them ' +
        '(`ACL SETUSER <user> +evalsha +eval`), or use `useScript: false` (plain commands, for `countBlocked: true` with a local clock)',
      { cause: error },
    );
  }
  if (NO_SCRIPTING.test(error.message) && !INSIDE_A_SCRIPT.test(error.message)) {
    return new StoreError(
      `The server of this rate limiter's ${redis.kind} client cannot run Lua scripts: it answered EVALSHA/EVAL with "${withoutArguments(error.message)}" ` +
        '(scripting is missing: the commands renamed or disabled, a proxy that does not pass them, or Valkey 9.1 or later without its Lua module). ' +
        withoutScripting(script),
      { cause: error },
    );
  }
  return error;
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
    if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw explained(error, redis, script);
    return redis.eval(script.lua, keys, args).then(read, (retryError: unknown) => {
      throw explained(retryError, redis, script);
    });
  });
}
