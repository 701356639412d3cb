// What the randomized model tests draw their schedules from (time steps,
// clocks, action ids), and the check of the promise itself on the answers.

import { expect } from 'chai';
import type { SeededRandom } from '../support/random.js';

/** How a schedule's time behaves. */
export type Timing = 'one clock' | 'two clocks' | 'steps back';

/** How far apart the two processes' clocks are. */
export const SKEW_US = 2_000_000;
/** How far a stepping clock steps back. */
export const STEP_BACK_US = 4_000_000;

export function randomTiming(random: SeededRandom): Timing {
  const roll = random.next();
  return roll < 0.25 ? 'two clocks' : roll < 0.42 ? 'steps back' : 'one clock';
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
 * id, checked against the promise: at most `maxInInterval` in any window of
 * `interval`. On a clock that only moves forward, checking the window that
 * ends at each admission covers every window.
 */
export class AdmissionLog {
  readonly #intervalUs: number;
  readonly #max: number;
  readonly #admitted = new Map<string, { t: number; actionId: string | undefined }[]>();

  constructor(intervalUs: number, max: number) {
    this.#intervalUs = intervalUs;
    this.#max = max;
  }

  admit(id: string, t: number, actionId: string | undefined, where: string): void {
    const admitted = this.#admitted.get(id) ?? [];
    admitted.push({ t, actionId });
    this.#admitted.set(id, admitted);
    const inWindow = admitted.filter((admission) => admission.t > t - this.#intervalUs && admission.t <= t).length;
    expect(inWindow, `${where}: admissions not undone in the window ending now`).to.be.at.most(this.#max);
  }

  undo(id: string, actionId: string): void {
    this.#admitted.set(
      id,
      (this.#admitted.get(id) ?? []).filter((admission) => admission.actionId !== actionId),
    );
  }

  clear(id: string): void {
    this.#admitted.delete(id);
  }
}
