// One limiter in the reference model: a stack of one tier of
// test/support/reference-stack.ts (the one reference model of
// docs/semantics.md), answering with a limiter's info.

import { limitInfoOf, ReferenceStack } from './reference-stack.js';

export interface ReferenceRules {
  intervalMs: number;
  maxInInterval: number;
  minDifferenceMs: number;
  countBlocked: boolean;
}

export interface ReferenceInfo {
  blocked: boolean;
  blockedDueToCount: boolean;
  blockedDueToMinDifference: boolean;
  actionsRemaining: number;
  millisecondsUntilAllowed: number;
  alreadyAdmitted?: true;
}

export class ReferenceLimiter {
  readonly #stack: ReferenceStack;

  constructor(rules: ReferenceRules) {
    this.#stack = new ReferenceStack([{ ...rules, namespace: '' }]);
  }

  attempt(id: string, t: number, actionId?: string): ReferenceInfo {
    return limitInfoOf(this.#stack.attempt(id, t, [0], actionId));
  }

  peek(id: string, t: number): ReferenceInfo {
    return limitInfoOf(this.#stack.peek(id, t));
  }

  undo(id: string, actionId: string): boolean {
    return this.#stack.undo(id, actionId);
  }

  clear(id: string): void {
    this.#stack.clear(id);
  }
}
