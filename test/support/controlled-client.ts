// A duck-typed ioredis client whose every call the test decides: served by
// redis-mock (an in-process Redis) while the test says the store is healthy,
// left hanging forever, or failed with a given error. It lets unit tests make
// a limiter's store hang or fail through the public API alone: the limiter is
// given it as its `client`, and the test watches the calls it receives.
//
// One call is what the limiter's store sends per decision, clear or undo: one
// MULTI/EXEC, or one EVALSHA (followed by an EVAL when Redis does not know the
// script). redis-mock cannot run scripts, so a script call that is to be
// served fails, saying so, unless the test answers it with a reply of its own.

import redisMock from 'redis-mock';
import type { IORedisLikeClient, RedisClient } from '../../src/index.js';

/** A command as the client receives it: its name (lower-case) and its arguments. */
export type SentCommand = readonly (string | number)[];

/** One call the client received. */
export interface SentCall {
  readonly kind: 'multi' | 'evalsha' | 'eval';
  /** The commands of a MULTI; empty for a script call. */
  readonly commands: readonly SentCommand[];
  /** The SHA1 of the script an EVALSHA names. */
  readonly sha1?: string;
}

/** What the client does with a call: answer it from redis-mock, never answer, reject with the error, or answer with the reply given. */
export type CallOutcome = 'serve' | 'hang' | Error | { readonly reply: unknown };

export interface ControlledClient {
  /** The object to pass as a limiter's `client`. */
  readonly client: RedisClient;
  /** Every call received so far, in order. */
  readonly calls: readonly SentCall[];
  /** How the client answers the calls from now on (initially: `'serve'`). */
  respond(outcome: CallOutcome | ((call: SentCall) => CallOutcome)): void;
  /** Closes the redis-mock connection behind it. */
  close(): void;
}

type ExecReplies = [error: Error | null, result: unknown][];

/** A client that answers as `respond` says; see the file comment. */
export function controlledClient(): ControlledClient {
  const mock = redisMock.createClient();
  const calls: SentCall[] = [];
  let decide: (call: SentCall) => CallOutcome = () => 'serve';

  const serveMulti = (commands: readonly SentCommand[]): Promise<ExecReplies> =>
    new Promise((resolve, reject) => {
      mock.multi(commands.map((command) => [...command])).exec((error: Error | null, replies: unknown[]) => {
        if (error) reject(error);
        else resolve(replies.map((reply) => (reply instanceof Error ? [reply, null] : [null, reply])));
      });
    });

  const answer = <T>(call: SentCall, serve: () => Promise<T>): Promise<T> => {
    calls.push(call);
    const outcome = decide(call);
    if (outcome === 'hang') return new Promise<T>(() => {});
    if (outcome instanceof Error) return Promise.reject(outcome);
    if (typeof outcome === 'object') return Promise.resolve(outcome.reply as T);
    return serve();
  };
  const cannotRunScripts = (): Promise<never> => Promise.reject(new Error('redis-mock cannot run scripts'));

  const client: IORedisLikeClient = {
    isCluster: false,
    multi: (commands) => {
      const call: SentCall = { kind: 'multi', commands: commands.map((command) => [...command]) };
      return { exec: () => answer(call, () => serveMulti(call.commands)) };
    },
    evalsha: (sha1: string) => answer({ kind: 'evalsha', commands: [], sha1 }, cannotRunScripts),
    eval: () => answer({ kind: 'eval', commands: [] }, cannotRunScripts),
    pipeline: () => {
      throw new Error('the limiter does not pipeline');
    },
  };

  return {
    client,
    calls,
    respond(outcome) {
      decide = typeof outcome === 'function' ? outcome : () => outcome;
    },
    close: () => mock.quit(),
  };
}
