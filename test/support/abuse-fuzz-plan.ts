// The plan of the abuse fuzz (test/redis/abuse-fuzz.test.ts), shared by the test and its worker processes
// (test/support/abuse-fuzz-worker.ts): the rules of the namespaces every worker writes, each worker's clocks,
// timeouts and policy, which workers serve each victim id in each phase, and the logs the workers send back.
// Everything is drawn from one seed, so a run replays from it (the timing is the machine's).

import { SeededRandom } from './random.js';

/**
 * How a limiter stamps its calls: `late` is this process's microsecond clock less a lateness drawn per call (a call
 * that reaches Redis that long after its stamp, up to most of the limiter's timeout), `local` and `redis` are the
 * library's own clocks.
 */
export type Mode = 'late' | 'local' | 'redis';
export const MODES: readonly Mode[] = ['late', 'local', 'redis'];

/**
 * The limiters every worker holds: a limit of actions, a budget of cost, and a limit of actions whose namespace a
 * budget (`mixedBudget`, the attacker's id only) writes too.
 */
export type Space = 'actions' | 'budget' | 'mixed' | 'mixedBudget';
export const SPACES: readonly Space[] = ['actions', 'budget', 'mixed', 'mixedBudget'];

/** The id that receives the abuse; every other id receives ordinary traffic. */
export const ATTACKER = 'mallory';

/** The largest budget the library takes (2^48): the budget's settlements go up to it, and one past it. */
export const BUDGET = 2 ** 48;
/** The budget the attacker's second rule puts on the mixed namespace. */
export const MIXED_BUDGET = 1_000;

/** One namespace's rule, as every writer of it has it. */
export interface SpaceRule {
  readonly namespace: string;
  /** Milliseconds. */
  readonly interval: number;
  /** maxInInterval, or maxCostInInterval when the rule counts cost. */
  readonly max: number;
  /** Milliseconds. */
  readonly minDifference: number;
  readonly countsCost: boolean;
}

/** A writer of a victim's keys in one phase: a worker and one of its limiters' clocks. */
export interface Route {
  readonly worker: number;
  readonly mode: Mode;
}

/**
 * An id of ordinary traffic: a user who comes in one phase and stays for the next (a new key, whose first writers
 * give it its horizon), or who stays all along.
 */
export interface Victim {
  readonly id: string;
  /** Per phase: who serves its calls (sticky routing, as a load balancer with sessions does); none when it is away. */
  readonly routes: readonly (readonly Route[])[];
}

/** What one worker process is told to do. */
export interface WorkerPlan {
  readonly seed: number;
  readonly worker: number;
  readonly url: string;
  readonly rules: Readonly<Record<Space, SpaceRule>>;
  /** Each clock's limiters' `timeout`, ms. */
  readonly timeouts: Readonly<Record<Mode, number>>;
  /** The clock of the attacker's budget on the mixed namespace. */
  readonly mixedBudgetMode: Mode;
  readonly batch: boolean;
  readonly policy: 'throw' | 'allow';
  readonly runMs: number;
  /**
   * Victims are served in phases: for the first `activeMs` of each, by the routes of that phase; then they are
   * quiet until the next (long enough for a key whose writers all have a short timeout to expire).
   */
  readonly phaseMs: number;
  readonly activeMs: number;
  /** How long the attacker's traffic on the mixed namespace favours one kind of rule, then the other. */
  readonly kindBlockMs: number;
  readonly victims: readonly Victim[];
  /** The most attempts the worker makes. */
  readonly maxAttempts: number;
}

/**
 * Two generations of processes, as in a rolling deployment: the old ones (the first half) give every limiter a
 * timeout of 1.2 s, the new ones 1.5 or 2 s, and 2 s to their late clock, whose calls, late by up to 1.5 s, then
 * need what an old process's key would have forgotten at its own timeout (0.5.0 before the least time in flight:
 * interval + 1.2 s). Every limiter keeps records for 2 s at least, so all of them keep one horizon: a timeout above
 * 2 s needs every writer of the namespace to share it (the promise of docs/semantics.md, "Bounds and shared
 * namespaces"). Long enough that a loaded machine answers within them.
 */
const OLD_TIMEOUT_MS = 1_200;
const NEW_TIMEOUTS_MS = [1_500, 2_000] as const;
const NEW_LATE_TIMEOUT_MS = 2_000;

/** Draws the run's plan: one per worker. */
export function planRun(seed: number, url: string, namespaces: Readonly<Record<Space, string>>, workers: number, runMs: number): WorkerPlan[] {
  const random = new SeededRandom(seed);
  const actionsInterval = random.pick([400, 500, 700]);
  // At least a third of the longest timeout: the admissions a key keeps for calls in flight (interval + timeout)
  // weigh at most 4 budgets, so ordinary traffic stays clear of the 2^51 a settlement may bring a key to.
  const budgetInterval = random.pick([1_500, 2_000]);
  const mixedInterval = random.pick([400, 600]);
  const mixedMax = random.pick([1, 2, 3]);
  const rules: Record<Space, SpaceRule> = {
    actions: {
      namespace: namespaces.actions,
      interval: actionsInterval,
      max: random.pick([3, 4, 6]),
      minDifference: random.pick([0, 10, 25]),
      countsCost: false,
    },
    budget: { namespace: namespaces.budget, interval: budgetInterval, max: BUDGET, minDifference: 0, countsCost: true },
    mixed: { namespace: namespaces.mixed, interval: mixedInterval, max: mixedMax, minDifference: 0, countsCost: false },
    mixedBudget: { namespace: namespaces.mixed, interval: mixedInterval, max: MIXED_BUDGET, minDifference: 0, countsCost: true },
  };
  const phaseMs = 3_600;
  const phases = Math.ceil(runMs / phaseMs);
  // Each phase, each victim present is served by one or two writers.
  const olds = Math.floor(workers / 2);
  const routesOf = (present: (phase: number) => boolean): Route[][] =>
    Array.from({ length: phases }, (_, phase) => {
      if (!present(phase)) return [];
      const count = random.pick([1, 1, 2]);
      const chosen: Route[] = [];
      while (chosen.length < count) {
        const route = { worker: random.int(0, workers - 1), mode: random.pick(MODES) };
        if (!chosen.some((other) => other.worker === route.worker && other.mode === route.mode)) chosen.push(route);
      }
      return chosen;
    });
  // Half the users who come are handed over, from one phase to the next, from an old process to a new one's late
  // clock: the moment of truth of a rolling deployment, when a call late by more than the old timeout needs what the
  // old process's key holds.
  const handedOver = (start: number): Route[][] =>
    Array.from({ length: phases }, (_, phase) => {
      if (phase === start) return [{ worker: random.int(0, olds - 1), mode: random.pick(MODES) }];
      return phase === start + 1 ? [{ worker: random.int(olds, workers - 1), mode: 'late' }] : [];
    });
  const victims: Victim[] = [{ id: 'alice', routes: routesOf(() => true) }];
  for (let start = 0; start < phases; start += 1) {
    for (const name of ['user', 'client', 'guest']) {
      const routes = random.chance(0.5) ? handedOver(start) : routesOf((phase) => phase === start || phase === start + 1);
      victims.push({ id: `${name}-${start}`, routes });
    }
  }
  return Array.from({ length: workers }, (_, worker) => ({
    seed,
    worker,
    url,
    rules,
    timeouts:
      worker < olds
        ? { late: OLD_TIMEOUT_MS, local: OLD_TIMEOUT_MS, redis: OLD_TIMEOUT_MS }
        : { late: NEW_LATE_TIMEOUT_MS, local: random.pick(NEW_TIMEOUTS_MS), redis: random.pick(NEW_TIMEOUTS_MS) },
    mixedBudgetMode: random.pick(MODES),
    batch: random.chance(0.5),
    policy: random.chance(0.5) ? 'throw' : 'allow',
    runMs,
    phaseMs,
    // Quiet for 2.3 s: longer than a key whose writers all have the old 1.2 s timeout lived in 0.5.0 (its interval
    // and that), so that a late call after the quiet finds only what the least time in flight kept.
    activeMs: phaseMs - 2_300,
    // The mixed namespace's key of one kind lives up to its interval + 2 s after the last write of that kind.
    kindBlockMs: 8_000,
    victims,
    maxAttempts: 60_000,
  }));
}

/** An admitted attempt, with its stamp as its clock gave it or as the store holds it. */
export interface Admission {
  readonly space: Space;
  readonly id: string;
  readonly worker: number;
  readonly mode: Mode;
  /** The stamp, integer microseconds. */
  readonly t: number;
  /** What it reserved (1 on a limit of actions). */
  readonly cost: number;
  /**
   * The lowest weight it ever had (its reservation, or a settlement below it), which every window's decisions saw it
   * at or above (test/contract/model-schedule.ts, AdmissionLog).
   */
  lowest: number;
  readonly actionId?: string;
  readonly lateUs: number;
  readonly timeoutMs: number;
  /** From its stamp to its answer, as this process's clock read it: above the timeout, the call is outside the promise. */
  readonly flightUs: number;
}

/** A call that failed, or that its policy decided instead of the store. */
export interface Failure {
  readonly role: 'attacker' | 'victim';
  readonly space: Space;
  readonly id: string;
  readonly worker: number;
  readonly mode: Mode;
  readonly operation: 'attempt' | 'settle';
  readonly what: string;
}

/** What one worker sends back, as its last line. */
export interface WorkerLog {
  readonly worker: number;
  readonly attempts: number;
  readonly blocked: number;
  readonly alreadyAdmitted: number;
  /** Settlements by outcome: settled, not held, refused (RangeError), and so on. */
  readonly settlements: Record<string, number>;
  readonly admissions: Admission[];
  /** Failures the contract allows on the attacker's id, by kind. */
  readonly expected: Record<string, number>;
  /** Every other failure, and every failure on a victim's id. */
  readonly failures: Failure[];
  /** What the worker found wrong by itself (a refused settlement that changed its weight, a lost record...). */
  readonly findings: string[];
  /** Attempts whose verdict is unknown (timed out): left out of the windows. */
  readonly unknown: number;
  /** The slowest answer to a victim's call, ms (information). */
  readonly slowestVictimMs: number;
}
