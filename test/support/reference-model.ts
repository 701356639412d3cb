// An independent reference model of SPEC.md "Exact semantics", written from
// the text and nothing else: plain arrays, no trimming, no shortcuts. The
// randomized model tests compare every store against it, field by field.

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
}

export class ReferenceLimiter {
  readonly #rules: ReferenceRules;
  readonly #recorded = new Map<string, number[]>();

  constructor(rules: ReferenceRules) {
    this.#rules = rules;
  }

  attempt(id: string, t: number): ReferenceInfo {
    return this.#evaluate(id, t, false);
  }

  peek(id: string, t: number): ReferenceInfo {
    return this.#evaluate(id, t, true);
  }

  clear(id: string): void {
    this.#recorded.delete(id);
  }

  #evaluate(id: string, t: number, dryRun: boolean): ReferenceInfo {
    const interval = this.#rules.intervalMs * 1000;
    const minDifference = this.#rules.minDifferenceMs * 1000;
    const max = this.#rules.maxInInterval;
    // 1. drop every timestamp <= t - interval
    const S = (this.#recorded.get(id) ?? []).filter((x) => x > t - interval);
    // 2-4.
    const blockedDueToCount = S.length >= max;
    const blockedDueToMinDifference = minDifference > 0 && S.length > 0 && t - Math.max(...S) < minDifference;
    const blocked = blockedDueToCount || blockedDueToMinDifference;
    // 5.
    const record = this.#rules.countBlocked || !blocked;
    const after = record ? [...S, t].sort((a, b) => a - b) : [...S].sort((a, b) => a - b);
    if (!dryRun) this.#recorded.set(id, after);
    // 6.
    const actionsRemaining = Math.max(0, max - after.length);
    // 7.
    let wait = 0;
    if (minDifference > 0 && after.length > 0) wait = Math.max(wait, Math.max(...after) + minDifference - t);
    if (after.length >= max) wait = Math.max(wait, (after[after.length - max] as number) + interval - t);
    return {
      blocked,
      blockedDueToCount,
      blockedDueToMinDifference,
      actionsRemaining,
      millisecondsUntilAllowed: Math.ceil(Math.max(0, wait) / 1000),
    };
  }
}
