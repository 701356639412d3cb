// The calls of an abuse fuzz worker (test/support/abuse-fuzz-worker.ts) and what they did: its limiters, one per
// namespace and clock (test/support/abuse-fuzz-plan.ts), each attempt's stamp and answer, each settlement's
// outcome, and the log the worker sends back. Every admission keeps its stamp, from the clock that made it (the late
// clock's value, read as the call starts), or for the library's own clocks from the store: the record of its action
// id, read as soon as it is admitted. It checks on its own that a refused settlement changed nothing.

import { Redis } from 'ioredis';
import { localMicroseconds } from '../../src/core/clock.js';
import { recordWeightsKey } from '../../src/core/identity.js';
import { RollingRateLimiter, StoreError, TimeoutError, type RateLimitInfo } from '../../src/index.js';
import { BUDGET, MODES, type Admission, type Failure, type Mode, type Space, type WorkerLog, type WorkerPlan } from './abuse-fuzz-plan.js';
import { keyOf } from './redis-keys.js';

/** One attempt to make. */
export interface Call {
  readonly role: 'attacker' | 'victim';
  readonly space: Space;
  readonly id: string;
  /** The clock of the limiter that makes it (the attacker's budget on the mixed namespace has the plan's). */
  readonly mode: Mode;
  readonly cost?: number | undefined;
  readonly actionId?: string | undefined;
  readonly singleUse?: boolean | undefined;
  /** On the late clock: how far in the past its stamp is, microseconds. */
  readonly lateUs: number;
}

type OwnSpace = Exclude<Space, 'mixedBudget'>;

function describeError(error: unknown): string {
  if (error instanceof StoreError) return `StoreError ${error.code}: ${error.message.slice(0, 200)}`;
  if (error instanceof Error) return `${error.name}: ${error.message.slice(0, 200)}`;
  return String(error);
}

/** The kind of an attacker's failure the contract allows (its own id's), or undefined. */
function allowedForAttacker(space: Space, error: unknown): string | undefined {
  if (error instanceof TimeoutError) return 'timeout';
  if (!(error instanceof StoreError)) return undefined;
  if (error.code === 'NAMESPACE_CONFLICT' && (space === 'mixed' || space === 'mixedBudget')) return 'NAMESPACE_CONFLICT';
  if (/more than 2\^52/.test(error.message) && (space === 'budget' || space === 'mixedBudget')) return 'records over 2^52';
  return undefined;
}

const count = (tally: Record<string, number>, kind: string): void => {
  tally[kind] = (tally[kind] ?? 0) + 1;
};

/** A worker's limiters, and what their calls did. */
export class AbuseRecorder {
  readonly #plan: WorkerPlan;
  readonly #clients: Redis[] = [];
  /** Reads what the store holds, beside the limiters' own connections. */
  readonly #reader: Redis;
  readonly #limiters: Record<Mode, Record<OwnSpace, RollingRateLimiter>>;
  readonly #mixedBudget: RollingRateLimiter;
  // The late clock: this process's clock less the lateness of the call being made. The library reads its clock
  // synchronously as a call starts, so the stamp of each call is the value read right then.
  #lateUs = 0;
  #lastStamp: number | undefined;

  readonly #admissions: Admission[] = [];
  readonly #failures: Failure[] = [];
  readonly #findings: string[] = [];
  readonly #expected: Record<string, number> = {};
  readonly #settlements: Record<string, number> = {};
  #attempts = 0;
  #blocked = 0;
  #alreadyAdmitted = 0;
  #unknown = 0;
  #slowestVictimMs = 0;
  /** The latest admission of each action id (by space, id and action id): the one a settlement settles. */
  readonly #latest = new Map<string, Admission>();
  /** The weight the store must hold for an admission, while it is known. */
  readonly #currentWeight = new Map<Admission, number>();

  constructor(plan: WorkerPlan) {
    this.#plan = plan;
    this.#reader = this.#connect();
    // A client per clock: limiters of two rules on one namespace (mixed) cannot share a client, as in two processes.
    this.#limiters = Object.fromEntries(
      MODES.map((mode) => {
        const client = this.#connect();
        return [
          mode,
          { actions: this.#limiter('actions', mode, client), budget: this.#limiter('budget', mode, client), mixed: this.#limiter('mixed', mode, client) },
        ];
      }),
    ) as Record<Mode, Record<OwnSpace, RollingRateLimiter>>;
    this.#mixedBudget = this.#limiter('mixedBudget', plan.mixedBudgetMode, this.#connect());
  }

  get attempts(): number {
    return this.#attempts;
  }

  /** Resolves once every connection answers. */
  async connected(): Promise<void> {
    await Promise.all(this.#clients.map((client) => client.ping()));
  }

  async close(): Promise<void> {
    await Promise.all(this.#clients.map((client) => client.quit()));
  }

  /** Whether the action id was admitted (its latest admission is the one a settlement settles). */
  admitted(space: Space, id: string, actionId: string): boolean {
    return this.#latest.has(this.#admissionKey(space, id, actionId));
  }

  /** Makes one attempt; its stamp is read as the call starts, its verdict kept when it answers. */
  attempt(call: Call): Promise<void> {
    const limiter = call.space === 'mixedBudget' ? this.#mixedBudget : this.#limiters[call.mode][call.space];
    const options = {
      ...(call.cost === undefined ? {} : { cost: call.cost }),
      ...(call.actionId === undefined ? {} : { actionId: call.actionId, singleUse: call.singleUse === true }),
    };
    const startedUs = localMicroseconds();
    this.#lateUs = call.mode === 'late' ? call.lateUs : 0;
    this.#lastStamp = undefined;
    let answer: Promise<RateLimitInfo>;
    try {
      answer = limiter.limitWithInfo(call.id, options);
    } finally {
      this.#lateUs = 0;
    }
    const stamp = call.mode === 'late' ? this.#lastStamp : undefined;
    if (call.mode === 'late' && stamp === undefined) throw new Error('the late clock was not read as the call started');
    this.#attempts += 1;
    return answer.then(
      (info) => this.#answered(call, info, stamp, startedUs),
      (error: unknown) => this.#failed(call, 'attempt', error),
    );
  }

  /** Settles an admitted action on the budget (or tries to); a refused settlement must change nothing. */
  async settle(role: Call['role'], id: string, mode: Mode, actionId: string, cost: number): Promise<void> {
    const admission = this.#latest.get(this.#admissionKey('budget', id, actionId));
    const aboveBudget = !Number.isSafeInteger(cost) || cost > BUDGET;
    try {
      const settled = await this.#limiters[mode].budget.settle(id, actionId, cost);
      count(this.#settlements, settled ? 'settled' : 'not held');
      if (aboveBudget) this.#findings.push(`settling ${actionId} of ${id} to ${cost}, above the budget, resolved ${String(settled)}: a RangeError is due`);
      if (settled && admission !== undefined) {
        admission.lowest = Math.min(admission.lowest, cost);
        this.#currentWeight.set(admission, cost);
      }
    } catch (error) {
      if (!(error instanceof RangeError) || role === 'victim' || !(aboveBudget || /2\^51/.test(error.message))) {
        if (error instanceof TimeoutError && admission !== undefined) {
          // It may have run: at its lowest it weighs this much, and what it weighs now is not known.
          admission.lowest = Math.min(admission.lowest, cost);
          this.#currentWeight.delete(admission);
        }
        return this.#failed({ role, space: 'budget', id, mode }, 'settle', error);
      }
      count(this.#settlements, aboveBudget ? 'refused: above the budget' : 'refused: the key would weigh more than 2^51');
      const known = admission === undefined ? undefined : this.#currentWeight.get(admission);
      if (known === undefined) return;
      const stored = await this.#reader.hget(recordWeightsKey(keyOf(this.#plan.rules.budget.namespace, id)), `+${actionId}`);
      if (stored !== null && Number(stored) !== known) {
        this.#findings.push(
          `settling ${actionId} of ${id} to ${cost} was refused (${error.message.slice(0, 80)}), yet its weight went from ${known} to ${stored}`,
        );
      }
    }
  }

  /** What the worker sends back. */
  log(): WorkerLog {
    return {
      worker: this.#plan.worker,
      attempts: this.#attempts,
      blocked: this.#blocked,
      alreadyAdmitted: this.#alreadyAdmitted,
      settlements: this.#settlements,
      admissions: this.#admissions,
      expected: this.#expected,
      failures: this.#failures,
      findings: this.#findings,
      unknown: this.#unknown,
      slowestVictimMs: this.#slowestVictimMs,
    };
  }

  #connect(): Redis {
    const client = new Redis(this.#plan.url, { maxRetriesPerRequest: 2 });
    this.#clients.push(client);
    return client;
  }

  #limiter(space: Space, mode: Mode, client: Redis): RollingRateLimiter {
    const rule = this.#plan.rules[space];
    return new RollingRateLimiter({
      client,
      namespace: rule.namespace,
      interval: rule.interval,
      ...(rule.countsCost ? { maxCostInInterval: rule.max } : { maxInInterval: rule.max }),
      minDifference: rule.minDifference,
      clock:
        mode === 'late'
          ? () => {
              this.#lastStamp = localMicroseconds() - this.#lateUs;
              return this.#lastStamp;
            }
          : mode,
      timeout: this.#plan.timeouts[mode],
      batch: this.#plan.batch,
      onStoreError: this.#plan.policy,
      // A breaker that two failures in a row open: any failure of the attacker's that counted would shut out victims.
      circuitBreaker: { failureThreshold: 2, cooldown: 2_000 },
    });
  }

  #admissionKey(space: Space, id: string, actionId: string): string {
    return `${space}|${id}|${actionId}`;
  }

  #failed(call: Pick<Call, 'role' | 'space' | 'id' | 'mode'>, operation: 'attempt' | 'settle', error: unknown, policy?: string): void {
    if (operation === 'attempt' && error instanceof TimeoutError) this.#unknown += 1;
    if (call.role === 'attacker') {
      // Under onStoreError 'allow' such a decision admits the attacker (the policy decides a failure of the store).
      const kind = allowedForAttacker(call.space, error);
      if (kind !== undefined) return count(this.#expected, `${kind} (${call.space}${policy === 'allow' ? ', admitted by the policy' : ''})`);
    }
    const { role, space, id, mode } = call;
    const what = `${policy === undefined ? '' : `${policy} by policy: `}${describeError(error)}`;
    this.#failures.push({ role, space, id, mode, worker: this.#plan.worker, operation, what });
  }

  async #answered(call: Call, info: RateLimitInfo, stamp: number | undefined, startedUs: number): Promise<void> {
    const answeredUs = localMicroseconds();
    if (call.role === 'victim') this.#slowestVictimMs = Math.max(this.#slowestVictimMs, (answeredUs - startedUs) / 1000);
    if (info.storeFailure !== undefined) return this.#failed(call, 'attempt', info.storeFailure.error, info.storeFailure.policy);
    if (info.alreadyAdmitted === true) {
      this.#alreadyAdmitted += 1;
      if (call.actionId === undefined || !this.admitted(call.space, call.id, call.actionId)) {
        this.#findings.push(`${call.actionId ?? 'an attempt without an action id'} on ${call.space} for ${call.id} answered alreadyAdmitted, never admitted`);
      }
      return;
    }
    if (info.blocked) {
      this.#blocked += 1;
      return;
    }
    const rule = this.#plan.rules[call.space];
    let t = stamp;
    if (call.actionId !== undefined) {
      // The admitted action's record: its stamp as the store holds it (the only one a call on a library clock has).
      const stored = await this.#reader.zscore(keyOf(rule.namespace, call.id), `+${call.actionId}`);
      if (stored === null) {
        this.#findings.push(`${call.actionId} admitted on ${call.space} for ${call.id} (${call.mode} clock), but its key holds no record of it`);
        return;
      }
      if (t !== undefined && Number(stored) !== t) this.#findings.push(`${call.actionId} stamped ${t} is stored at ${stored}`);
      t = Number(stored);
    }
    if (t === undefined) throw new Error(`an admission on the ${call.mode} clock without an action id has no stamp`);
    const weight = rule.countsCost ? (call.cost ?? 1) : 1;
    const admission: Admission = {
      space: call.space,
      id: call.id,
      worker: this.#plan.worker,
      mode: call.mode,
      t,
      cost: weight,
      lowest: weight,
      lateUs: call.mode === 'late' ? call.lateUs : 0,
      timeoutMs: this.#plan.timeouts[call.mode],
      flightUs: answeredUs - t,
      ...(call.actionId === undefined ? {} : { actionId: call.actionId }),
    };
    this.#admissions.push(admission);
    if (call.actionId !== undefined) {
      this.#latest.set(this.#admissionKey(call.space, call.id, call.actionId), admission);
      this.#currentWeight.set(admission, weight);
    }
  }
}
