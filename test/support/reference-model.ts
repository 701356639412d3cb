// One limiter in the reference model: a stack of one tier of
// test/support/reference-stack.ts (the one reference model of
// docs/semantics.md), answering with a limiter's info.

import { limitInfoOf, ReferenceStack, type ReferenceRejection } from './reference-stack.js';

export interface ReferenceRules {
  intervalMs: number;
  /** An action limiter's maximum per window (exactly one of this and `maxCostInInterval` is given). */
  maxInInterval?: number;
  /** A cost limiter's maximum cost per window. */
  maxCostInInterval?: number;
  minDifferenceMs: number;
  countBlocked: boolean;
  /** How long a call may be in flight (the limiter's `timeout`); default 2000. */
  inFlightMs?: number;
}

export interface ReferenceInfo {
  blocked: boolean;
  blockedDueToCount: boolean;
  blockedDueToMinDifference: boolean;
  actionsRemaining: number;
  millisecondsUntilAllowed: number;
  /** Present exactly when the limiter counts cost. */
  costRemaining?: number;
  alreadyAdmitted?: true;
}

export class ReferenceLimiter {
  readonly #stack: ReferenceStack;

  constructor(rules: ReferenceRules) {
    this.#stack = new ReferenceStack([{ ...rules, namespace: '' }]);
  }

  /** An attempt at `t` (microseconds), with an action id or not, of `cost` (default 1). */
  attempt(id: string, t: number, actionId?: string, cost?: number): ReferenceInfo {
    return limitInfoOf(this.#stack.attempt(id, t, [0], actionId, cost));
  }

  peek(id: string, t: number, cost?: number): ReferenceInfo {
    return limitInfoOf(this.#stack.peek(id, t, [0], cost));
  }

  undo(id: string, actionId: string): boolean {
    return this.#stack.undo(id, actionId);
  }

  /** Settles the admitted `actionId` to `cost` at `t`; true when there was one in the window. */
  settle(id: string, actionId: string, cost: number, t: number): boolean {
    return this.#stack.settle(id, actionId, cost, t);
  }

  /** What an attempt with `cost` rejects with, if anything. */
  rejectsCost(cost: unknown): ReferenceRejection {
    return this.#stack.rejectsCost(cost);
  }

  /** What `settle` with `cost` rejects with, if anything. */
  rejectsSettle(cost: unknown): ReferenceRejection {
    return this.#stack.rejectsSettle(cost);
  }

  clear(id: string): void {
    this.#stack.clear(id);
  }
}
