// The promise the abuse fuzz (test/redis/abuse-fuzz.test.ts) checks on the admissions its workers logged, from
// their stamps alone (docs/semantics.md, "Time in flight" and "Costs"): per namespace and id, in every window
// (t - interval, t] of stamps, the admissions weigh at most the rule's max, each at the lowest weight it ever had
// (test/contract/model-schedule.ts, AdmissionLog: the same as "max plus what settlements raised above the
// reservations", counting a settlement down and back up as a raise), and admissions are at least minDifference
// apart. Sound whatever order the calls ran in: the decision that ran last among a window's admissions saw every
// other of them stored (they were decided before it, and a record outlives every call in flight that can count
// it), each at a weight at or above its lowest.
//
// An admission answered more than its limiter's timeout after its stamp (a late call that also waited on a loaded
// machine) is outside the promise: a breach that holds one is reported as excused, not as an over-admission.

import type { Admission, Space, SpaceRule } from './abuse-fuzz-plan.js';

/** A window over its max, or two admissions closer than minDifference. */
export interface Breach {
  readonly space: Space;
  readonly id: string;
  readonly kind: 'window' | 'gap';
  /** The stamp the window ends at (its newest admission), microseconds. */
  readonly endUs: number;
  /** What the window's admissions weigh at their lowest; for a gap, the distance in microseconds. */
  readonly measured: number;
  readonly admissions: readonly Admission[];
  /** Set when an admission of it is outside the promise: why. */
  readonly excused?: string;
}

/** What the check found. */
export interface WindowReport {
  /** Windows checked: one ending at each admission. */
  readonly windows: number;
  readonly breaches: readonly Breach[];
}

/** Why an admission is outside the promise, or undefined. */
function outsidePromise(admission: Admission): string | undefined {
  if (admission.flightUs <= admission.timeoutMs * 1000) return undefined;
  return `${admission.actionId ?? 'an admission'} answered ${Math.round(admission.flightUs / 1000)} ms after its stamp, past its ${admission.timeoutMs} ms timeout`;
}

function breachOf(space: Space, id: string, kind: Breach['kind'], measured: number, admissions: Admission[]): Breach {
  const excused = admissions.map(outsidePromise).find((why) => why !== undefined);
  const endUs = (admissions.at(-1) as Admission).t;
  return { space, id, kind, endUs, measured, admissions, ...(excused === undefined ? {} : { excused }) };
}

/** Checks every window of every (namespace, id) the admissions hold. */
export function checkWindows(admissions: readonly Admission[], rules: Readonly<Record<Space, SpaceRule>>): WindowReport {
  const groups = new Map<string, Admission[]>();
  for (const admission of admissions) {
    const group = `${admission.space}\u0000${admission.id}`;
    const list = groups.get(group) ?? [];
    list.push(admission);
    groups.set(group, list);
  }
  const breaches: Breach[] = [];
  let windows = 0;
  for (const list of groups.values()) {
    const { space, id } = list[0] as Admission;
    const rule = rules[space];
    const intervalUs = rule.interval * 1000;
    const gapUs = rule.minDifference * 1000;
    list.sort((a, b) => a.t - b.t);
    let from = 0;
    let weight = 0;
    for (let i = 0; i < list.length; i += 1) {
      const end = list[i] as Admission;
      weight += end.lowest;
      while ((list[from] as Admission).t <= end.t - intervalUs) {
        weight -= (list[from] as Admission).lowest;
        from += 1;
      }
      // Several admissions of one stamp: the window ending at it holds them all, and is checked at the last.
      if (i + 1 < list.length && (list[i + 1] as Admission).t === end.t) continue;
      windows += 1;
      if (weight > rule.max) breaches.push(breachOf(space, id, 'window', weight, list.slice(from, i + 1)));
      const previous = list[i - 1];
      if (gapUs > 0 && previous !== undefined && end.t - previous.t < gapUs) breaches.push(breachOf(space, id, 'gap', end.t - previous.t, [previous, end]));
    }
  }
  return { windows, breaches };
}

/** A breach as a failure message shows it: the window and each admission's clock, lateness and timeout. */
export function describeBreach(breach: Breach, rule: SpaceRule): string {
  const what =
    breach.kind === 'window'
      ? `admissions weighing ${breach.measured} (max ${rule.max}) in the window of ${rule.interval} ms ending at ${breach.endUs}`
      : `two admissions ${breach.measured} us apart (minDifference ${rule.minDifference} ms)`;
  const lines = breach.admissions.map(
    (a) =>
      `    t=${a.t} (${(a.t - breach.endUs) / 1000} ms) worker ${a.worker} ${a.mode} clock, timeout ${a.timeoutMs} ms, late ${a.lateUs / 1000} ms, ` +
      `answered ${Math.round(a.flightUs / 1000)} ms after its stamp, ${a.actionId ?? 'no action id'}, weight ${a.lowest}${a.lowest === a.cost ? '' : ` (reserved ${a.cost})`}`,
  );
  return [`  ${breach.space} / ${breach.id}: ${what}${breach.excused === undefined ? '' : ` (excused: ${breach.excused})`}`, ...lines].join('\n');
}
