// The adapter for @upstash/redis, Redis over HTTP (a REST endpoint: Upstash,
// or anything that speaks its protocol), recognised by its members: the
// library never imports it. Every call is one HTTP request, or one entry of
// the client's automatic pipeline (on by default: the calls of one tick go as
// one `/pipeline` request). Scripts go by `evalsha(sha, keys, args)`, and by
// `eval` after NOSCRIPT (run-script.ts); `batch: true` makes one script call,
// so one request, of a whole batch. A transaction is one call of the atomic
// block script, as for Valkey GLIDE: @upstash/redis's `multi()` queues only its
// own typed methods, one per command and each with its own argument shapes
// (`zadd(key, { score, member })`, no `zrevrange`), not a command as the
// library builds it; the script runs the same commands atomically, in one
// request. Replies are read whatever the client's `automaticDeserialization`
// made of them: replies.ts takes an integer as `"123"` or `123` alike, and a
// transaction gives back as text the strings the parsing made numbers of. Errors come back in
// Redis's words (`NOSCRIPT …`) without the client's wrapping (`Command failed:
// …`, `…, command was: [the whole command]`), the client's error as the cause.

import type { RedisAdapter } from './adapter.js';
import { hasMembers, type RedisCommand, type UpstashLikeClient } from './client-types.js';
import { execReplies } from './exec-replies.js';
import { stringsOf } from './node-redis-commands.js';
import { runScript } from './run-script.js';
import { ATOMIC_BLOCK_SCRIPT } from '../scripts/atomic-block-script.js';

/**
 * @upstash/redis's wordings around a server's error: `Command failed: <error>`
 * (automatic pipeline), `Command <n> [ <name> ] failed: <error>` (pipeline),
 * `<error>, command was: <the command as JSON>` (one request answered with an
 * HTTP error).
 */
const WRAPPED_ERROR = /^(?:Command failed: |Command \d+ \[ [^\]]* \] failed: )?([\s\S]*?)(?:, command was: [\s\S]*)?$/;

/** The error in the server's words (`NOSCRIPT …`), caused by the client's; the client's error as it is when it wraps nothing; anything else as it is. */
export function upstashErrorOf(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const unwrapped = WRAPPED_ERROR.exec(error.message)?.[1];
  return unwrapped === undefined || unwrapped === error.message || unwrapped === '' ? error : new Error(unwrapped, { cause: error });
}

function throwUpstashError(error: unknown): never {
  throw upstashErrorOf(error);
}

/** Every argument as a string: the client would send a number as a JSON number, and `Infinity` as `null`. */
function stringArgs(args: readonly (string | number)[]): string[] {
  return args.map(String);
}

/** The items of an array reply with every number and boolean, at any depth, as its text. */
function textsIn(items: readonly unknown[]): unknown[] {
  return items.map((item) => (typeof item === 'number' || typeof item === 'boolean' ? String(item) : Array.isArray(item) ? textsIn(item) : item));
}

/** {@link RedisAdapter} for an @upstash/redis `Redis` client. */
export class UpstashAdapter implements RedisAdapter {
  readonly client: UpstashLikeClient;
  readonly kind = '@upstash/redis';
  readonly supportsScripts = true;
  /** One endpoint, one keyspace as the client sees it: calls are never split by hash slot. */
  readonly isCluster = false;

  constructor(client: UpstashLikeClient) {
    this.client = client;
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.evalsha(sha1, [...keys], stringArgs(args)).catch(throwUpstashError);
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.eval(lua, [...keys], stringArgs(args)).catch(throwUpstashError);
  }

  /**
   * The commands in one call of the atomic block script, in one request, keyed by the first command's key. Inside
   * each command's array reply (`ZREVRANGE … WITHSCORES`, `SCAN`), a number or a boolean is given back as text:
   * there Redis answered strings (members, scores, keys), which the client's JSON parsing turns into numbers or
   * booleans where they read as one (a member `-42`), and only where their own text is the string's.
   */
  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    const args = commands.flatMap((command) => [String(command.length), ...stringsOf(command)]);
    return runScript(this, ATOMIC_BLOCK_SCRIPT, [String(commands[0]?.[1] ?? '')], args, (reply) =>
      execReplies(reply).map((item) => (Array.isArray(item) ? textsIn(item) : item)),
    );
  }

  /**
   * One command by @upstash/redis's `exec([name, ...args])` (its way to send any command; never part of an automatic
   * pipeline). Upstash refuses `CONFIG`, which the server check takes in its stride (it asks `INFO` next).
   */
  serverCommand(command: RedisCommand): Promise<unknown> {
    if (typeof this.client.exec !== 'function') return Promise.reject(new Error('This @upstash/redis client has no `exec` to send any command'));
    return this.client.exec(stringsOf(command) as [string, ...string[]]).catch(throwUpstashError);
  }
}

/**
 * True when `client` looks like an @upstash/redis `Redis` client (also behind its automatic pipelining, a Proxy):
 * its scripts by `evalsha(sha, keys, args)`, `scriptLoad`, `multi` and `pipeline`. Tested after the clients that also
 * have some of these (ioredis, node-redis), which their own members tell apart first.
 */
export function isUpstashClient(client: object): client is UpstashLikeClient {
  return hasMembers(client, { evalsha: 'function', eval: 'function', scriptLoad: 'function', multi: 'function', pipeline: 'function' });
}
