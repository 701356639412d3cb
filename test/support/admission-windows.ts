// Checks the logs of test/support/short-interval-worker.ts against the promise
// of docs/semantics.md ("Exact semantics", "Action ids, undo, clear" and "Time
// in flight"): at every moment, in any window (t - interval, t] of stamps, at
// most maxInInterval admitted records not undone, and admitted records at
// least minDifference apart. Pure: logs in, findings out.
//
// What the logs tell, and what they do not:
//   - A decision's stamp is the limiter's own; an admission counts only when
//     its call answered within its timeout (less a margin) of its stamp, so
//     that Redis surely ran it in time. A call that failed or answered late
//     may or may not have been admitted: it is left out, which can only hide
//     an over-admission, never make one up.
//   - Calls on one of a process's own action ids follow each other, so which
//     admission an undo removed is known: the latest one of that action id.
//   - When an undo ran, against the other processes' calls, is known only
//     within the call's span: a set of records is an over-admission only if
//     none of them can have been undone before all of them were recorded (each
//     answered before the first of their undos was sent, with a margin for
//     the processes' clocks, each within a millisecond of the wall clock).

import type { FuzzDecision, FuzzLog, FuzzUndo } from './short-interval-worker.js';

/** The rule of a scenario, in microseconds. */
export interface FuzzRule {
  readonly intervalUs: number;
  readonly maxInInterval: number;
  readonly minDifferenceUs: number;
  readonly timeoutUs: number;
  readonly countBlocked: boolean;
}

/** One admitted record, as the logs tell it. */
export interface Admission {
  readonly id: number;
  readonly worker: number;
  /** '' for none. */
  readonly actionId: string;
  readonly stamp: number;
  /** When its call answered (the process's local clock). */
  readonly answered: number;
  /** When the undo that removed it was sent; Infinity when none did. */
  undoneFrom: number;
}

/** What the logs of one scenario hold, and what the check found. */
export interface ScenarioFindings {
  readonly decisions: number;
  readonly admissions: number;
  readonly undos: number;
  /** Decisions that failed or answered too late to be sure Redis ran them in time (left out), and undos that failed. */
  readonly unknown: number;
  readonly alreadyAdmitted: number;
  /** Broken promises, each described with its stamps. */
  readonly violations: string[];
  /** The admitted records of each id, in stamp order. */
  readonly byId: readonly Admission[][];
  /** What a checker reading the logs the wrong way would have reported: see {@link misreadings}. */
  readonly misread: Misreadings;
  /** Stamps on a whole millisecond (a multiple of 1000 µs): the local clock's reading after it follows the wall clock. */
  readonly wholeMillisecondStamps: number;
}

/** Over-admissions a checker would report that are none. */
export interface Misreadings {
  /** Sets of maxInInterval + 1 admissions within a closed span [t - interval, t] of stamps, none in an open one. */
  readonly closedWindow: number;
  /** Sets of maxInInterval + 1 admissions whose calls answered (the await resumed) within one interval. */
  readonly answeredWindow: number;
}

/**
 * How far apart two processes' readings of their local clocks may be from the true order of the moments they read:
 * each reading lies in the wall clock's current millisecond, so within a millisecond of the wall clock.
 */
const CLOCK_MARGIN_US = 2_000;

/**
 * A call that answered later than its timeout less this after its stamp may have run past its timeout, outside the
 * promise: it is left out (the clocks' margin, and a millisecond that a stamp may run ahead of the wall clock).
 */
export const LATE_MARGIN_MS = 3;

/** Reads a scenario's logs, and checks the promise. */
export function checkScenario(rule: FuzzRule, idCount: number, logs: readonly FuzzLog[]): ScenarioFindings {
  const violations: string[] = [];
  const byId: Admission[][] = Array.from({ length: idCount }, () => []);
  let decisions = 0;
  let undos = 0;
  let unknown = 0;
  let alreadyAdmitted = 0;
  let wholeMillisecondStamps = 0;
  const lateUs = rule.timeoutUs - LATE_MARGIN_MS * 1000;

  for (const log of logs) {
    /** Per own action id: its latest admission not undone, and whether calls on it are still known. */
    const ownActions = new Map<string, { latest: Admission | undefined; poisoned: boolean }>();
    const stateOf = (id: number, actionId: string): { latest: Admission | undefined; poisoned: boolean } => {
      const name = `${id}|${actionId}`;
      let state = ownActions.get(name);
      if (state === undefined) ownActions.set(name, (state = { latest: undefined, poisoned: false }));
      return state;
    };
    const where = (id: number, actionId: string, stamp: number): string =>
      `process ${log.worker}, id ${id}${actionId === '' ? '' : `, action ${actionId}`}, stamp ${stamp}`;

    for (const [kind, ...event] of log.events) {
      if (kind === 'd') {
        const [id, actionId, own, stamp, answered, outcome] = event as unknown as FuzzDecision;
        decisions += 1;
        if (stamp % 1000 === 0) wholeMillisecondStamps += 1;
        const onTime = outcome !== 'failed' && answered - stamp <= lateUs;
        if (!onTime) unknown += 1;
        const state = own === 1 ? stateOf(id, actionId) : undefined;
        if (state !== undefined && !onTime) state.poisoned = true;
        if (!onTime) continue;
        if (outcome === 'already') alreadyAdmitted += 1;
        if (state !== undefined && !state.poisoned) {
          const counting = state.latest !== undefined && state.latest.stamp > stamp - rule.intervalUs;
          if (outcome === 'admitted' && counting) {
            violations.push(`${where(id, actionId, stamp)}: admitted again while its admission at ${state.latest?.stamp} counts`);
          }
          if (outcome === 'already' && !counting) {
            violations.push(`${where(id, actionId, stamp)}: answered alreadyAdmitted with no admission of it in its window`);
          }
        }
        if (outcome !== 'admitted') continue;
        const admission: Admission = { id, worker: log.worker, actionId, stamp, answered, undoneFrom: Infinity };
        byId[id]?.push(admission);
        if (state !== undefined) state.latest = admission;
      } else {
        const [id, actionId, sent, answered, removed] = event as unknown as FuzzUndo;
        undos += 1;
        if (removed === -1) unknown += 1;
        const state = stateOf(id, actionId);
        const latest = state.latest;
        if (removed === -1 || state.poisoned) {
          // Unknown whether it removed anything: the latest admission is taken as undone from when it was sent.
          if (latest !== undefined && removed !== 0) latest.undoneFrom = Math.min(latest.undoneFrom, sent);
          if (removed === -1) state.poisoned = true;
          if (removed === 1) state.latest = undefined;
          continue;
        }
        if (removed === 1) {
          if (latest === undefined) violations.push(`${where(id, actionId, sent)}: undo removed an admission the process does not know of`);
          else latest.undoneFrom = sent;
          state.latest = undefined;
        } else if (latest !== undefined) {
          // Nothing removed: only right once the record may have been forgotten or its key expired, interval + timeout
          // after its stamp (a millisecond sooner: the stamp may run that far ahead of the wall clock).
          if (answered < latest.stamp + rule.intervalUs + rule.timeoutUs - 1_000 - CLOCK_MARGIN_US) {
            violations.push(`${where(id, actionId, sent)}: undo found nothing, and its admission at ${latest.stamp} had to be there`);
          }
          state.latest = undefined;
        }
      }
    }
  }

  let admissions = 0;
  for (const records of byId) {
    records.sort((a, b) => a.stamp - b.stamp || a.answered - b.answered);
    admissions += records.length;
    violations.push(...windowViolations(rule, records), ...gapViolations(rule, records));
  }
  return {
    decisions,
    admissions,
    undos,
    unknown,
    alreadyAdmitted,
    violations,
    byId,
    misread: misreadings(rule, byId),
    wholeMillisecondStamps,
  };
}

/** Whether `record` cannot have been undone before `moment` (an undo sent after it, past the clocks' margin). */
function heldAt(record: Admission, moment: number): boolean {
  return record.undoneFrom > moment + CLOCK_MARGIN_US;
}

function describe(records: readonly Admission[]): string {
  const first = (records[0] as Admission).stamp;
  return records
    .map(
      (r) =>
        `${r.stamp} (+${r.stamp - first} µs, process ${r.worker}${r.actionId === '' ? '' : `, action ${r.actionId}`}${r.undoneFrom < Infinity ? ', undone later' : ''})`,
    )
    .join(', ');
}

/** More than maxInInterval admissions, held at one moment, in one window (t - interval, t] of stamps. */
function windowViolations(rule: FuzzRule, records: readonly Admission[]): string[] {
  const found: string[] = [];
  let oldest = 0;
  for (let newest = 0; newest < records.length; newest += 1) {
    const t = (records[newest] as Admission).stamp;
    while ((records[oldest] as Admission).stamp <= t - rule.intervalUs) oldest += 1;
    const window = records.slice(oldest, newest + 1);
    if (window.length <= rule.maxInInterval) continue;
    // The moments to try: when each of them had answered (all of a set are recorded once the last one answered).
    for (const moment of window.map((r) => r.answered)) {
      const held = window.filter((r) => r.answered <= moment && heldAt(r, moment));
      if (held.length > rule.maxInInterval) {
        found.push(`id ${held[0]?.id}: ${held.length} admitted within (t - ${rule.intervalUs} µs, t], at most ${rule.maxInInterval}: ${describe(held)}`);
        break;
      }
    }
  }
  return found;
}

/** Two admissions held at one moment, less than minDifference apart. */
function gapViolations(rule: FuzzRule, records: readonly Admission[]): string[] {
  const found: string[] = [];
  if (rule.minDifferenceUs === 0) return found;
  for (let i = 0; i < records.length; i += 1) {
    const a = records[i] as Admission;
    for (let j = i + 1; j < records.length && (records[j] as Admission).stamp - a.stamp < rule.minDifferenceUs; j += 1) {
      const b = records[j] as Admission;
      const moment = Math.max(a.answered, b.answered);
      if (heldAt(a, moment) && heldAt(b, moment)) {
        found.push(`id ${a.id}: two admitted ${b.stamp - a.stamp} µs apart, at least ${rule.minDifferenceUs}: ${describe([a, b])}`);
      }
    }
  }
  return found;
}

/**
 * The over-admissions two wrong readings of the same logs report (admissions never undone): a closed window
 * [t - interval, t] where the rule's is open at its start, and windows of the times the calls answered (when an
 * await resumed) instead of their stamps. Each counts the sets it would report (by their newest member).
 */
export function misreadings(rule: FuzzRule, byId: readonly (readonly Admission[])[]): Misreadings {
  let closedWindow = 0;
  let answeredWindow = 0;
  const over = (times: readonly number[], closed: boolean): number => {
    let count = 0;
    let oldest = 0;
    for (let newest = 0; newest < times.length; newest += 1) {
      const t = times[newest] as number;
      while ((times[oldest] as number) < t - rule.intervalUs || (!closed && (times[oldest] as number) === t - rule.intervalUs)) oldest += 1;
      if (newest - oldest + 1 > rule.maxInInterval) count += 1;
    }
    return count;
  };
  for (const records of byId) {
    const kept = records.filter((r) => r.undoneFrom === Infinity);
    const stamps = kept.map((r) => r.stamp);
    closedWindow += over(stamps, true) - over(stamps, false);
    answeredWindow += over(
      kept.map((r) => r.answered).sort((a, b) => a - b),
      false,
    );
  }
  return { closedWindow, answeredWindow };
}

/** What the key of one id must hold at the end of a scenario in which nothing was forgotten and no call failed. */
export interface ExpectedKey {
  /** The stamps of admitted attempts without an action id. */
  readonly plainAdmitted: number[];
  /** The stamps of every attempt without an action id (blocked ones are recorded with countBlocked). */
  readonly plainAll: number[];
  /**
   * Per action id: the stamp of its latest admission, held as `+<action id>`, unless it was undone; and its earlier
   * admissions not undone, held without their action id (`=<stamp>+<action id>`).
   */
  readonly actions: Map<string, { readonly current: number | undefined; readonly earlier: number[] }>;
}

/** The records each id's key must hold, from the logs and the admissions {@link checkScenario} read. */
export function expectedKeys(idCount: number, logs: readonly FuzzLog[], byId: readonly (readonly Admission[])[]): ExpectedKey[] {
  const keys: ExpectedKey[] = Array.from({ length: idCount }, () => ({ plainAdmitted: [], plainAll: [], actions: new Map() }));
  for (const log of logs) {
    for (const [kind, ...event] of log.events) {
      if (kind !== 'd') continue;
      const [id, actionId, , stamp] = event as unknown as FuzzDecision;
      if (actionId === '') keys[id]?.plainAll.push(stamp);
    }
  }
  byId.forEach((records, id) => {
    const key = keys[id] as ExpectedKey;
    const byAction = new Map<string, Admission[]>();
    for (const record of records) {
      if (record.actionId === '') {
        if (record.undoneFrom === Infinity) key.plainAdmitted.push(record.stamp);
      } else byAction.set(record.actionId, [...(byAction.get(record.actionId) ?? []), record]);
    }
    // An admission of an action id is written only once its latest admission left the window: stamp order is the
    // order they were written in, and the latest holds `+<action id>` (an undo removes it, and only it).
    for (const [actionId, admissions] of byAction) {
      const latest = admissions.at(-1) as Admission;
      const earlier = admissions.slice(0, -1).filter((r) => r.undoneFrom === Infinity);
      key.actions.set(actionId, { current: latest.undoneFrom === Infinity ? latest.stamp : undefined, earlier: earlier.map((r) => r.stamp) });
    }
  });
  return keys;
}

/** Differences between what a key holds (ZRANGE ... WITHSCORES) and what it must hold, described. */
export function keyDifferences(expected: ExpectedKey, stored: readonly string[], countBlocked: boolean): string[] {
  const found: string[] = [];
  const plain: number[] = [];
  const current = new Map<string, number>();
  const earlier = new Map<string, number[]>();
  for (let i = 0; i < stored.length; i += 2) {
    const member = stored[i] as string;
    const score = Number(stored[i + 1]);
    const first = member.charAt(0);
    // A blocked action's record, or a mark of the key's own (not a record: '#' and what the key is kept for).
    if (first === '-' || first === '#') continue;
    if (first === '+') current.set(member.slice(1), score);
    else if (first === '=') {
      // '=<stamp>+<action id>': an earlier admission of the action, kept without its action id.
      const plus = member.indexOf('+');
      if (member.slice(1, plus) !== String(score)) found.push(`${member} holds score ${score}`);
      const actionId = member.slice(plus + 1);
      earlier.set(actionId, [...(earlier.get(actionId) ?? []), score]);
    } else plain.push(score);
  }
  const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);
  const same = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((value, i) => value === b[i]);
  const within = (part: readonly number[], whole: readonly number[]): boolean => {
    const left = new Map<number, number>();
    for (const value of whole) left.set(value, (left.get(value) ?? 0) + 1);
    return part.every((value) => {
      const n = left.get(value) ?? 0;
      left.set(value, n - 1);
      return n > 0;
    });
  };
  // With countBlocked, blocked attempts are recorded too, and the flood bound trims records without an action id
  // (earlier admissions of an action id among them) where no decision can tell.
  if (countBlocked) {
    if (!within(plain, expected.plainAll)) found.push(`records without an action id at stamps no attempt had: ${sorted(plain).join(', ')}`);
  } else if (!same(sorted(plain), sorted(expected.plainAdmitted))) {
    found.push(`records without an action id ${sorted(plain).join(', ')}, admitted ${sorted(expected.plainAdmitted).join(', ')}`);
  }
  for (const actionId of new Set([...current.keys(), ...earlier.keys(), ...expected.actions.keys()])) {
    const wanted = expected.actions.get(actionId) ?? { current: undefined, earlier: [] };
    if (current.get(actionId) !== wanted.current) {
      found.push(`action ${actionId}: +${actionId} at ${current.get(actionId) ?? 'none'}, its latest admission not undone at ${wanted.current ?? 'none'}`);
    }
    const held = sorted(earlier.get(actionId) ?? []);
    const admitted = sorted(wanted.earlier);
    if (!(countBlocked ? within(held, admitted) : same(held, admitted))) {
      found.push(`action ${actionId}: earlier admissions held at ${held.join(', ') || 'none'}, admitted and not undone at ${admitted.join(', ') || 'none'}`);
    }
  }
  return found;
}
