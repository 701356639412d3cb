// What the randomized model tests draw their schedules from (time steps,
// clocks, action ids), and the check of the promise itself on the answers.

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
export function randomAdvance(random: SeededRandom, rules: { intervalMs: number; maxInInterval: number; minDifferenceMs: number }, waitMs = 0): number {
  const intervalUs = rules.intervalMs * 1000;
  const gapUs = rules.minDifferenceMs * 1000;
  return random.pick([
    0,
    0,
    1,
    random.int(1, 999),
    1000,
    intervalUs,
    intervalUs - 1,
    Math.floor(intervalUs / rules.maxInInterval),
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

/**
 * The admissions a limiter answered (not undone, since the last clear), per
 * id, checked against the promise, whatever order they were stamped in: at
 * most `maxInInterval` in any window of `interval` (every window that holds
 * the new admission: the one ending at it, and those ending at each later
 * admission within `interval`), and at least `minDifference` between any two.
 */
export class AdmissionLog {
  readonly #intervalUs: number;
  readonly #max: number;
  readonly #gapUs: number;
  readonly #admitted = new Map<string, { t: number; actionId: string | undefined }[]>();

  constructor(intervalUs: number, max: number, gapUs = 0) {
    this.#intervalUs = intervalUs;
    this.#max = max;
    this.#gapUs = gapUs;
  }

  admit(id: string, t: number, actionId: string | undefined, where: string): void {
    const admitted = this.#admitted.get(id) ?? [];
    if (this.#gapUs > 0 && admitted.length > 0) {
      const nearest = Math.min(...admitted.map((admission) => Math.abs(admission.t - t)));
      expect(nearest, `${where}: the nearest admission not undone`).to.be.at.least(this.#gapUs);
    }
    admitted.push({ t, actionId });
    this.#admitted.set(id, admitted);
    for (const end of admitted) {
      if (end.t < t || end.t >= t + this.#intervalUs) continue;
      const inWindow = admitted.filter((admission) => admission.t > end.t - this.#intervalUs && admission.t <= end.t).length;
      expect(inWindow, `${where}: admissions not undone in the window ending at ${end.t}`).to.be.at.most(this.#max);
    }
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
