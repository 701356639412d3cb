// What the randomized model tests draw their schedules from (time steps,
// clocks, action ids, costs and settlements), and the check of the promise
// itself on the answers.

import { expect } from 'chai';
import type { SeededRandom } from '../support/random.js';

/**
 * How a schedule's time behaves: one clock; two processes' clocks apart; one clock that steps back now and then;
 * or calls that reach the store late, by up to the limiter's timeout, and so out of stamp order.
 */
export type Timing = 'one clock' | 'two clocks' | 'steps back' | 'late';

/** How far apart the two processes' clocks are. */
export const SKEW_US = 2_000_000;
/** How far a stepping clock steps back. */
export const STEP_BACK_US = 4_000_000;
/** How long a call may be in flight: the limiter's default `timeout`, 2 s. */
export const IN_FLIGHT_US = 2_000_000;

export function randomTiming(random: SeededRandom): Timing {
  const roll = random.next();
  return roll < 0.2 ? 'two clocks' : roll < 0.33 ? 'steps back' : roll < 0.6 ? 'late' : 'one clock';
}

/**
 * How late a call reaches the store after its stamp, up to {@link IN_FLIGHT_US}: its stamp is that much before the
 * store's present, and calls made after it may carry later stamps (they arrive first). Often 0 or exactly the most.
 */
export function randomLateness(random: SeededRandom, rules: { intervalMs: number; minDifferenceMs: number }): number {
  return Math.min(
    IN_FLIGHT_US,
    random.pick([0, 0, IN_FLIGHT_US, IN_FLIGHT_US - 1, random.int(0, IN_FLIGHT_US), random.int(0, IN_FLIGHT_US), rules.minDifferenceMs * 1000, 1]),
  );
}

/** A time step that often lands exactly on the window or gap boundary, or on 0 (two attempts in one microsecond). */
export function randomAdvance(
  random: SeededRandom,
  rules: { intervalMs: number; maxInInterval?: number; maxCostInInterval?: number; minDifferenceMs: number },
  waitMs = 0,
): number {
  const intervalUs = rules.intervalMs * 1000;
  const max = rules.maxInInterval ?? rules.maxCostInInterval ?? 1;
  const gapUs = rules.minDifferenceMs * 1000;
  return random.pick([
    0,
    0,
    1,
    random.int(1, 999),
    1000,
    intervalUs,
    intervalUs - 1,
    Math.floor(intervalUs / Math.min(max, 50)),
    gapUs,
    Math.max(0, gapUs - 1),
    waitMs * 1000,
    Math.max(0, waitMs * 1000 - 1),
    random.int(0, Math.min(intervalUs * 2, 10_000_000)),
  ]);
}

/**
 * An action id for an attempt (or undefined: no action id) or an undo, from
 * a small pool, so that retries of ids admitted, blocked and undone earlier
 * are frequent. Some ids need escaping in a key or differ only in a lone
 * surrogate.
 */
export function randomActionId(random: SeededRandom, forUndo: boolean): string | undefined {
  if (!forUndo && random.chance(0.3)) return undefined;
  return random.pick(['j1', 'j2', 'j3', 'j4', 'j5', 'j:{6}%', 'j-\uD800', 'j-\uFFFD']);
}

/** A cost tier's maximum: mostly small, so that windows fill within a schedule; sometimes large. */
export function randomMaxCost(random: SeededRandom): number {
  const roll = random.next();
  return roll < 0.65 ? random.int(5, 40) : roll < 0.85 ? random.int(1, 4) : random.pick([100, 1000, 200_000]);
}

/**
 * The cost of an attempt on a cost tier of maximum `max` (every attempt on a budget gives one): often 1, often near
 * the maximum, sometimes exactly it, sometimes exactly the cost the last answer said remains (or one more).
 */
export function randomCost(random: SeededRandom, max: number, lastCostRemaining?: number): number {
  const remaining = lastCostRemaining ?? random.int(1, max);
  const drawn = random.pick<number>([
    1,
    1,
    1,
    1,
    2,
    max,
    max - 1,
    Math.ceil(max / 2),
    random.int(1, max),
    random.int(1, Math.ceil(max / 3)),
    remaining,
    remaining + 1,
  ]);
  return Math.max(1, Math.min(max, drawn));
}

/**
 * A settled cost: down (to 0, 1, below the reservation), the reservation itself, up above it, up to the tier's
 * maximum (the most a settlement may be).
 */
export function randomSettleCost(random: SeededRandom, max: number, reserved?: number): number {
  const r = Math.min(max, reserved ?? random.int(1, max));
  return random.pick([0, 0, 1, r, r, Math.max(0, r - 1), random.int(0, r), Math.min(max, r + 1), Math.min(max, r + random.int(1, max)), max, max]);
}

/**
 * A cost no call accepts on a cost tier of maximum `max`, with the error it must reject with: 0, negative,
 * fractional, not finite, above the maximum, not a number, or none (a budget weighs what each attempt says).
 */
export function randomBadCost(random: SeededRandom, max: number): { cost: unknown; error: 'TypeError' | 'RangeError' } {
  return random.pick<{ cost: unknown; error: 'TypeError' | 'RangeError' }>([
    { cost: 0, error: 'RangeError' },
    { cost: -1, error: 'RangeError' },
    { cost: 1.5, error: 'RangeError' },
    { cost: NaN, error: 'RangeError' },
    { cost: Infinity, error: 'RangeError' },
    { cost: 2 ** 53, error: 'RangeError' },
    { cost: max + 1, error: 'RangeError' },
    { cost: String(Math.min(max, 2)), error: 'TypeError' },
    { cost: true, error: 'TypeError' },
    { cost: undefined, error: 'TypeError' },
  ]);
}

/**
 * A settled cost no settle accepts on cost tiers whose smallest maximum is `max`, with the error it must reject with:
 * negative, fractional, not a number, above the maximum (one action cannot use more than the whole budget).
 */
export function randomBadSettleCost(random: SeededRandom, max: number): { cost: unknown; error: 'TypeError' | 'RangeError' } {
  return random.pick<{ cost: unknown; error: 'TypeError' | 'RangeError' }>([
    { cost: -1, error: 'RangeError' },
    { cost: 0.5, error: 'RangeError' },
    { cost: NaN, error: 'RangeError' },
    { cost: 2 ** 53, error: 'RangeError' },
    { cost: max + 1, error: 'RangeError' },
    { cost: 2 * max, error: 'RangeError' },
    { cost: '3', error: 'TypeError' },
    { cost: undefined, error: 'TypeError' },
  ]);
}

/** A value as a failure message shows it (NaN and undefined too). */
export function shown(value: unknown): string {
  return typeof value === 'number' || value === undefined ? String(value) : JSON.stringify(value);
}

/** A call's outcome: its value, or what it rejected with. */
export type Outcome = { value: unknown } | { error: unknown };

/**
 * Runs `call` and settles its outcome; a synchronous throw is an outcome too, marked as such (the library's calls
 * reject, they never throw).
 */
export function outcomeOf(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return call().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  } catch (error) {
    return Promise.resolve({ error: new Error(`threw synchronously instead of rejecting: ${String(error)}`) });
  }
}

/** Checks an outcome against what the model expects: the value (deep equal), or a rejection of that class. */
export function expectOutcome(actual: Outcome, expected: Outcome, where: string): void {
  if ('error' in expected) {
    const name = expected.error as 'TypeError' | 'RangeError';
    expect('error' in actual, `${where}: rejects with a ${name}, got ${JSON.stringify((actual as { value?: unknown }).value)}`).to.equal(true);
    const error = (actual as { error: unknown }).error;
    expect(error, `${where}: rejects with a ${name}`).to.be.instanceOf(name === 'TypeError' ? TypeError : RangeError);
    return;
  }
  if ('error' in actual) throw new Error(`${where}: rejected with ${String(actual.error)}`, { cause: actual.error });
  expect(actual.value, where).to.deep.equal(expected.value);
}

/**
 * The action id to settle: usually one admitted lately for the id (the reservation a caller settles), sometimes any
 * from the pool (blocked, undone, left the window, never seen).
 */
export function randomSettleActionId(random: SeededRandom, admittedLately: readonly string[] | undefined): string {
  if (admittedLately !== undefined && admittedLately.length > 0 && random.chance(0.7)) return random.pick(admittedLately.slice(-3));
  return randomActionId(random, true) as string;
}

/** The id a settlement is for: usually one with an action admitted lately. */
export function randomSettleId(random: SeededRandom, ids: readonly string[], admittedLately: ReadonlyMap<string, readonly string[]>): string {
  const candidates = ids.filter((id) => (admittedLately.get(id) ?? []).length > 0);
  return candidates.length > 0 && random.chance(0.8) ? random.pick(candidates) : random.pick(ids);
}

/** The time step before a settlement: often soon after the reservation (the call it paid for has just returned). */
export function randomSettleAdvance(
  random: SeededRandom,
  rules: { intervalMs: number; maxInInterval?: number; maxCostInInterval?: number; minDifferenceMs: number },
  waitMs = 0,
): number {
  return random.chance(0.6) ? random.pick([0, 1, random.int(0, 999_999)]) : randomAdvance(random, rules, waitMs);
}

/** Notes an action id admitted for an id (the last few are kept, latest last), for {@link randomSettleActionId}. */
export function noteAdmitted(lately: Map<string, string[]>, id: string, actionId: string): void {
  const ids = (lately.get(id) ?? []).filter((earlier) => earlier !== actionId);
  ids.push(actionId);
  lately.set(id, ids.slice(-3));
}

/**
 * The admissions a limiter answered (not undone, since the last clear), per
 * id, checked against the promise, whatever order they were stamped in: at
 * most `maxInInterval` in any window of `interval` (every window that holds
 * the new admission: the one ending at it, and those ending at each later
 * admission within `interval`), and at least `minDifference` between any two.
 *
 * With costs, each admission weighs its cost (1 on an action tier) and may be
 * settled later to another cost. The promise is then: in any window, the
 * admitted cost is at most the maximum plus what settlements raised above
 * the record's weight when the window's admissions were decided. Exactly:
 * every decision saw each record in its window at its weight then, and a
 * weight is never below the lowest it has ever been, so the lowest weight
 * each admission ever had (its reservation, or less if settled lower since)
 * sums to at most the maximum in every window. (The spec's short form, "the
 * current cost is at most max plus the rises above the reservations", is the
 * same as long as no settlement goes back up after going down: reserve 10,
 * settle to 2, admit 8 more, settle back to 10, and the window weighs 18 with
 * no settlement above its reservation.)
 */
export class AdmissionLog {
  readonly #intervalUs: number;
  readonly #max: number;
  readonly #gapUs: number;
  readonly #admitted = new Map<string, { t: number; actionId: string | undefined; reserved: number; lowest: number; current: number }[]>();

  constructor(intervalUs: number, max: number, gapUs = 0) {
    this.#intervalUs = intervalUs;
    this.#max = max;
    this.#gapUs = gapUs;
  }

  /** Logs an admission at `t` of weight `weight` (1 on an action tier, the attempt's cost on a cost tier) and checks every window that holds it. */
  admit(id: string, t: number, actionId: string | undefined, where: string, weight = 1): void {
    const admitted = this.#admitted.get(id) ?? [];
    if (this.#gapUs > 0 && admitted.length > 0) {
      const nearest = Math.min(...admitted.map((admission) => Math.abs(admission.t - t)));
      expect(nearest, `${where}: the nearest admission not undone`).to.be.at.least(this.#gapUs);
    }
    admitted.push({ t, actionId, reserved: weight, lowest: weight, current: weight });
    this.#admitted.set(id, admitted);
    for (const end of admitted) {
      if (end.t < t || end.t >= t + this.#intervalUs) continue;
      const inWindow = admitted.filter((admission) => admission.t > end.t - this.#intervalUs && admission.t <= end.t);
      const lowest = inWindow.reduce((sum, admission) => sum + admission.lowest, 0);
      // The same as: the current weight is at most max plus what settlements raised above those lowest weights.
      expect(lowest, `${where}: admissions not undone in the window ending at ${end.t} (each at the lowest weight it ever had)`).to.be.at.most(this.#max);
    }
  }

  /** Settles the action's latest admission (the one the model settled: an earlier one lost its id when re-admitted) to `cost`. */
  settle(id: string, actionId: string, cost: number): void {
    const admitted = this.#admitted.get(id) ?? [];
    const latest = admitted.findLast((admission) => admission.actionId === actionId);
    if (latest === undefined) return;
    latest.current = cost;
    latest.lowest = Math.min(latest.lowest, cost);
  }

  /** Undoes the action's latest admission: an earlier one, re-admitted after it left the window, keeps counting. */
  undo(id: string, actionId: string): void {
    const admitted = this.#admitted.get(id) ?? [];
    const latest = admitted.findLastIndex((admission) => admission.actionId === actionId);
    if (latest >= 0) admitted.splice(latest, 1);
  }

  clear(id: string): void {
    this.#admitted.delete(id);
  }
}
