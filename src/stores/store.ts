import type { RecordedWindow, Verdict, WindowRule } from '../decision.js';

/** One attempt (or dry run) for one id. */
export interface AttemptRequest {
  /** The id's key, built by {@link KeyBuilder}. */
  readonly key: string;
  /** The limiter's rules. */
  readonly rule: WindowRule;
  /** The attempt's timestamp, integer microseconds since the epoch. */
  readonly now: number;
}

/** What a store decided and what it holds afterwards, for {@link describe}. */
export interface AttemptOutcome {
  readonly verdict: Verdict;
  readonly after: RecordedWindow;
}

/**
 * Where a limiter keeps its recorded timestamps. The limiter knows only this
 * interface; only adapters know clients.
 */
export interface Store {
  /** Decides an attempt and records it as SPEC step 5 says, atomically. */
  attempt(request: AttemptRequest): Promise<AttemptOutcome>;
  /** Decides an attempt as `attempt` would, and writes nothing at all. */
  peek(request: AttemptRequest): Promise<AttemptOutcome>;
  /** Forgets everything recorded under `key`. */
  clear(key: string): Promise<void>;
}
