import { RateLimiterError } from './rate-limiter-error.js';

/**
 * What a client shows about its connection when a call timed out, as a Redis
 * adapter reports it: the client is not connected, and why, when it said.
 */
export interface ConnectionProblem {
  /** What is wrong, naming the client and its state, e.g. `ioredis is not connected (status "reconnecting")`. */
  readonly summary: string;
  /** The client's last connection error (e.g. `connect ECONNREFUSED 127.0.0.1:6379`), when it reported one. */
  readonly cause?: Error;
}

/**
 * The store did not answer within the limiter's `timeout`. The call's outcome
 * is unknown: the attempt may or may not have been recorded. When the client
 * was not connected at the time, the message says so and `cause` is the
 * client's last connection error, if it reported one.
 */
export class TimeoutError extends RateLimiterError {
  /** The timeout that ran out, in milliseconds. */
  readonly timeoutMs: number;

  /**
   * @param timeoutMs The timeout that ran out, in milliseconds.
   * @param problem What the client showed about its connection, when it was not connected.
   */
  constructor(timeoutMs: number, problem?: ConnectionProblem) {
    super(
      problem === undefined
        ? `The store did not answer within ${timeoutMs} ms; check that Redis is reachable, or raise the \`timeout\` option`
        : `The store did not answer within ${timeoutMs} ms: ${problem.summary}` +
            (problem.cause === undefined ? '' : `; the last connection error: ${problem.cause.message}`) +
            '. A longer `timeout` would not help: check that Redis is running and reachable from here',
      'ERR_RATE_LIMITER_TIMEOUT',
      problem?.cause === undefined ? undefined : { cause: problem.cause },
    );
    this.timeoutMs = timeoutMs;
  }

  /** The error's name, `'TimeoutError'`, as in its stack trace. */
  override readonly name: string = 'TimeoutError';
}
