// A reference model of attempts with action ids, written from the documented
// rules, for the randomized action-id test:
// - a window keeps the newest maxInInterval recorded attempts (which is all
//   that SPEC's decisions ever look at, so without action ids this is SPEC
//   exactly);
// - an action id already admitted and still kept is answered as admitted
//   again, and nothing is recorded;
// - otherwise the attempt is decided as SPEC says, counting any blocked
//   record of the same id like any other; when recorded, the action's earlier
//   record (if kept) is moved to now: marked admitted or blocked;
// - undo removes a kept admitted action.

import type { ReferenceInfo, ReferenceRules } from './reference-model.js';

interface Entry {
  readonly t: number;
  readonly member: string | undefined;
}

export class ReferenceActionLimiter {
  readonly #rules: ReferenceRules;
  readonly #kept = new Map<string, Entry[]>();

  constructor(rules: ReferenceRules) {
    this.#rules = rules;
  }

  attempt(id: string, t: number, actionId?: string): ReferenceInfo & { alreadyAdmitted?: true } {
    const max = this.#rules.maxInInterval;
    let S = this.#window(id, t);
    if (actionId !== undefined && S.some((entry) => entry.member === `+${actionId}`)) {
      return { ...this.#info(S, t, false, false), alreadyAdmitted: true };
    }
    const byCount = S.length >= max;
    const gap = this.#rules.minDifferenceMs * 1000;
    const byGap = gap > 0 && S.length > 0 && t - Math.max(...S.map((entry) => entry.t)) < gap;
    const blocked = byCount || byGap;
    if (this.#rules.countBlocked || !blocked) {
      const member = actionId === undefined ? undefined : `${blocked ? '-' : '+'}${actionId}`;
      if (actionId !== undefined) S = S.filter((entry) => entry.member !== `-${actionId}`);
      S = [...S, { t, member }].sort((a, b) => a.t - b.t).slice(-max);
    }
    this.#kept.set(id, S);
    return this.#info(S, t, byCount, byGap);
  }

  undo(id: string, t: number, actionId: string): void {
    this.#kept.set(
      id,
      this.#window(id, t).filter((entry) => entry.member !== `+${actionId}`),
    );
  }

  #window(id: string, t: number): Entry[] {
    return (this.#kept.get(id) ?? []).filter((entry) => entry.t > t - this.#rules.intervalMs * 1000);
  }

  #info(after: readonly Entry[], t: number, byCount: boolean, byGap: boolean): ReferenceInfo {
    const interval = this.#rules.intervalMs * 1000;
    const gap = this.#rules.minDifferenceMs * 1000;
    const max = this.#rules.maxInInterval;
    let wait = 0;
    if (gap > 0 && after.length > 0) wait = Math.max(wait, Math.max(...after.map((entry) => entry.t)) + gap - t);
    if (after.length >= max) wait = Math.max(wait, (after[after.length - max] as Entry).t + interval - t);
    return {
      blocked: byCount || byGap,
      blockedDueToCount: byCount,
      blockedDueToMinDifference: byGap,
      actionsRemaining: Math.max(0, max - after.length),
      millisecondsUntilAllowed: Math.ceil(Math.max(0, wait) / 1000),
    };
  }
}
