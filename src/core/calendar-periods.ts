// The periods of a calendar quota (SPEC.md, "Calendar quotas"): the hours, days, weeks, months or years of a time
// zone's wall clock, optionally shifted to an anchor, as intervals of microseconds. The rule for clocks that jump
// (daylight saving time, a skipped day) is in docs/semantics.md, "Calendar periods": a period starts at the first
// instant at which the zone's clock reads its start or later.
//
// Pure and portable: Intl.DateTimeFormat reads the zone's clock; nothing else is used.

import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';

/** The length of a calendar period, on the zone's wall clock. */
export type CalendarPeriodKind = 'hour' | 'day' | 'week' | 'month' | 'year';

/** What {@link CalendarPeriods} is made from. */
export interface CalendarPeriodOptions {
  /** The length of each period, on the wall clock of `timeZone`. */
  readonly period: CalendarPeriodKind;
  /**
   * The IANA time zone whose wall clock the periods follow, such as `'Europe/Berlin'`.
   * @defaultValue `'UTC'`
   */
  readonly timeZone?: string;
  /**
   * An instant (a `Date`, or milliseconds since the epoch) whose wall-clock reading in `timeZone` every period starts
   * at: its minute and second for hours, its time of day for days, its weekday and time for weeks, its day of the
   * month and time for months (the last day of a month that has no such day), its date and time for years (28
   * February in a year without 29 February). Without it, periods start at :00, at midnight, on Monday at midnight
   * (ISO weeks), on the 1st at midnight, and on 1 January at midnight.
   */
  readonly anchor?: Date | number;
}

/** One period: the instants from `startUs` (included) to `endUs` (excluded), in microseconds since the epoch. */
export interface CalendarPeriod {
  /** The first instant of the period, in microseconds since the epoch. */
  readonly startUs: number;
  /** The first instant of the next period, in microseconds since the epoch: the period's last instant is `endUs - 1`. */
  readonly endUs: number;
  /**
   * The period's name: the number of periods between it and period 0, the first whose wall-clock start is at or after
   * 1970-01-01 00:00 in the zone (negative before it). The same in every process for the same `period`, `timeZone` and
   * anchor position; it increases with time, and skips the periods the zone's clock jumps over entirely.
   */
  readonly index: number;
}

const SECOND_MS = 1000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
const US_PER_MS = 1000;
/** The step of the scan that finds the first instant reaching a wall time when a zone changes offset twice nearby. */
const SCAN_STEP_MS = 30 * 60_000;
const KINDS: readonly CalendarPeriodKind[] = ['hour', 'day', 'week', 'month', 'year'];
/** Where 1970-01-01 (day 0) falls in the week, as `Date#getUTCDay` counts (Thursday). */
const EPOCH_WEEKDAY = 4;
const MONDAY = 1;

/** Where each period starts on the wall clock, read from the anchor (or the defaults). */
interface Position {
  /** Milliseconds into the hour ('hour') or into the day (every other kind). */
  readonly timeMs: number;
  /** The first day number (days since 1970-01-01) on the start weekday, at or after day 0 ('week'). */
  readonly firstWeekDay: number;
  /** The month, 0 to 11 ('year'). */
  readonly month: number;
  /** The day of the month, 1 to 31 ('month', 'year'): the last day of a shorter month. */
  readonly dayOfMonth: number;
}

const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

/** A formatter that reads the wall clock of `timeZone` to the second, made once per zone name. */
function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    wallClockFormats.set(timeZone, format);
  }
  return format;
}

/** The offset of the zone's wall clock from UTC at the whole second that holds `ms`, in milliseconds. */
function offsetFrom(format: Intl.DateTimeFormat, ms: number): number {
  const second = Math.floor(ms / SECOND_MS) * SECOND_MS;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let sec = 0;
  for (const part of format.formatToParts(second)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
    else if (part.type === 'hour')
      hour = Number(part.value) % 24; // Some engines write midnight as 24.
    else if (part.type === 'minute') minute = Number(part.value);
    else if (part.type === 'second') sec = Number(part.value);
  }
  return Date.UTC(year, month - 1, day, hour, minute, sec) - second;
}

function checkTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== 'string') {
    throw new InvalidOptionTypeError(
      `Expected \`timeZone\` to be an IANA time zone name such as 'Europe/Berlin', got \`${String(timeZone)}\` (${typeof timeZone})`,
      'timeZone',
      timeZone,
    );
  }
  try {
    wallClockFormat(timeZone);
  } catch {
    throw new InvalidOptionRangeError(
      `Expected \`timeZone\` to be an IANA time zone name such as 'Europe/Berlin', got \`${timeZone}\`, which this runtime does not know`,
      'timeZone',
      timeZone,
    );
  }
  return timeZone;
}

function checkAnchor(anchor: unknown): number | undefined {
  if (anchor === undefined) return undefined;
  const ms = anchor instanceof Date ? anchor.getTime() : anchor;
  if (typeof ms !== 'number') {
    throw new InvalidOptionTypeError(
      `Expected \`anchor\` to be a Date or milliseconds since the epoch, got a value of type ${anchor === null ? 'null' : typeof anchor}`,
      'anchor',
      anchor,
    );
  }
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(ms * US_PER_MS)) {
    throw new InvalidOptionRangeError(
      `Expected \`anchor\` to be an instant between the years 1685 and 2255 (integer milliseconds since the epoch), got \`${ms}\`${anchor instanceof Date ? ' (a Date)' : ''}`,
      'anchor',
      anchor,
    );
  }
  return ms;
}

function floorMod(value: number, modulus: number): number {
  return value - Math.floor(value / modulus) * modulus;
}

/** Midnight (as UTC milliseconds) of day `dayOfMonth` of a month, or of its last day when it has fewer days. */
function dateInMonth(year: number, month: number, dayOfMonth: number): number {
  const first = Date.UTC(year, month, 1);
  const days = (Date.UTC(year, month + 1, 1) - first) / DAY_MS;
  return first + (Math.min(dayOfMonth, days) - 1) * DAY_MS;
}

/**
 * The calendar periods of one `period`, `timeZone` and `anchor`: which period an instant belongs to, and when the
 * next one starts. Each period follows the zone's wall clock, and starts at the first instant at which that clock
 * reads its start time or later: a start the clock skips (02:30 on a spring-forward night) begins when the clock
 * jumps past it, a start it reads twice (after falling back) begins at the first reading, and the readings repeated
 * after a fall back stay in the period already reached. So a day is 23 or 25 hours long where the zone's is.
 *
 * The latest two periods asked for are kept: a call in one of them costs two comparisons; a call in a new period reads
 * the zone's clock with `Intl.DateTimeFormat` a few times.
 */
export class CalendarPeriods {
  /** The length of each period. */
  readonly period: CalendarPeriodKind;
  /** The time zone, as given. */
  readonly timeZone: string;
  /** The zone's offset from UTC at an instant, both in milliseconds; undefined for UTC, whose clock is the instant. */
  readonly #offsetAt: ((ms: number) => number) | undefined;
  readonly #position: Position;
  #current: CalendarPeriod | undefined;
  #previous: CalendarPeriod | undefined;

  /**
   * @param options The period's length, its time zone (default `'UTC'`) and an optional anchor.
   * @throws {@link InvalidOptionTypeError} or {@link InvalidOptionRangeError} naming the option: a `period` that is not
   *   one of the five kinds, a `timeZone` that is not a string or that the runtime's `Intl` does not know, an `anchor`
   *   that is neither a `Date` nor a number, or an instant outside the years 1685 to 2255.
   */
  constructor(options: CalendarPeriodOptions) {
    const { period, timeZone = 'UTC', anchor } = options;
    if (!KINDS.includes(period)) {
      throw new InvalidOptionRangeError(
        `Expected \`period\` to be one of 'hour', 'day', 'week', 'month', 'year', got \`${String(period)}\` (${typeof period})`,
        'period',
        period,
      );
    }
    this.period = period;
    this.timeZone = checkTimeZone(timeZone);
    const anchorMs = checkAnchor(anchor);
    const format = wallClockFormat(this.timeZone);
    this.#offsetAt = format.resolvedOptions().timeZone === 'UTC' ? undefined : (ms) => offsetFrom(format, ms);
    this.#position = anchorMs === undefined ? defaultPosition() : this.#positionOf(anchorMs + (this.#offsetAt?.(anchorMs) ?? 0));
  }

  /**
   * The period that holds an instant.
   * @param instantUs An instant, in integer microseconds since the epoch.
   * @returns The period, the same object for every instant of it while it is one of the latest two asked for.
   * @throws RangeError when `instantUs` is not a safe integer.
   */
  periodOf(instantUs: number): CalendarPeriod {
    const current = this.#current;
    if (current !== undefined && instantUs >= current.startUs && instantUs < current.endUs) return current;
    return this.#locate(instantUs);
  }

  /**
   * When the period after the one that holds an instant starts (its `endUs`): the wait of an attempt that this period
   * cannot admit.
   * @param instantUs An instant, in integer microseconds since the epoch.
   * @returns The first instant of the next period, in microseconds since the epoch.
   * @throws RangeError when `instantUs` is not a safe integer.
   */
  nextPeriodStart(instantUs: number): number {
    return this.periodOf(instantUs).endUs;
  }

  #locate(instantUs: number): CalendarPeriod {
    if (!Number.isSafeInteger(instantUs)) {
      throw new RangeError(`Expected an instant in integer microseconds since the epoch, got \`${String(instantUs)}\` (${typeof instantUs})`);
    }
    const current = this.#current;
    const previous = this.#previous;
    let found: CalendarPeriod | undefined;
    if (previous !== undefined && instantUs >= previous.startUs && instantUs < previous.endUs) {
      found = previous;
    } else if (current !== undefined && instantUs >= current.endUs) {
      // Most often the next period: its start is known (the current one's end, where period index + 1 starts).
      const endUs = this.#startUs(current.index + 2);
      if (instantUs < endUs) found = { startUs: current.endUs, endUs, index: current.index + 1 };
    }
    found ??= this.#search(instantUs);
    this.#previous = current;
    this.#current = found;
    return found;
  }

  /** The period of an instant, from the wall clock's reading at it. */
  #search(instantUs: number): CalendarPeriod {
    const ms = Math.floor(instantUs / US_PER_MS);
    // The clock has read at least this: the period it falls in has started (and perhaps later ones, after a fall back).
    let index = this.#indexAtOrBefore(ms + (this.#offsetAt?.(ms) ?? 0));
    let startUs = this.#startUs(index);
    while (startUs > instantUs) startUs = this.#startUs(--index); // Never, unless a zone defeats firstInstantReading.
    let endUs = this.#startUs(index + 1);
    while (endUs <= instantUs) {
      index += 1;
      startUs = endUs;
      endUs = this.#startUs(index + 1);
    }
    return { startUs, endUs, index };
  }

  #positionOf(wall: number): Position {
    const date = new Date(wall);
    const dayNumber = Math.floor(wall / DAY_MS);
    return {
      timeMs: floorMod(wall, this.period === 'hour' ? HOUR_MS : DAY_MS),
      firstWeekDay: floorMod(dayNumber, 7),
      month: date.getUTCMonth(),
      dayOfMonth: date.getUTCDate(),
    };
  }

  /** Where period `index` starts on the wall clock, as UTC milliseconds. */
  #wallStart(index: number): number {
    const { timeMs, firstWeekDay, month, dayOfMonth } = this.#position;
    switch (this.period) {
      case 'hour':
        return index * HOUR_MS + timeMs;
      case 'day':
        return index * DAY_MS + timeMs;
      case 'week':
        return (firstWeekDay + 7 * index) * DAY_MS + timeMs;
      case 'month': {
        const years = Math.floor(index / 12);
        return dateInMonth(1970 + years, index - 12 * years, dayOfMonth) + timeMs;
      }
      case 'year':
        return dateInMonth(1970 + index, month, dayOfMonth) + timeMs;
    }
  }

  /** The last period whose wall-clock start is at or before the wall time `wall`. */
  #indexAtOrBefore(wall: number): number {
    const { timeMs, firstWeekDay } = this.#position;
    switch (this.period) {
      case 'hour':
        return Math.floor((wall - timeMs) / HOUR_MS);
      case 'day':
        return Math.floor((wall - timeMs) / DAY_MS);
      case 'week':
        return Math.floor((wall - timeMs - firstWeekDay * DAY_MS) / WEEK_MS);
      case 'month':
      case 'year': {
        const date = new Date(wall);
        const years = date.getUTCFullYear() - 1970;
        const index = this.period === 'year' ? years : 12 * years + date.getUTCMonth();
        return this.#wallStart(index) > wall ? index - 1 : index;
      }
    }
  }

  /** The first instant of period `index` (empty when it equals the next one's), in microseconds. */
  #startUs(index: number): number {
    const wall = this.#wallStart(index);
    return (this.#offsetAt === undefined ? wall : firstInstantReading(this.#offsetAt, wall)) * US_PER_MS;
  }
}

/**
 * The first instant at which a zone's clock reads `wall` or later. Offsets lie within a day of UTC, so the answer lies
 * within a day of `wall`: with the offsets a day either side, one offset change in between is found and placed in at
 * most three readings of `offsetAt` (and a search to the second when `wall` falls in the gap the change opens). Two
 * changes within those two days (none of the tz database's zones, read day by day from 1900 to 2100, has them) are
 * walked in steps of 30 minutes when the readings disagree; a change undone within the two days may go unseen.
 *
 * Internal, exported for its tests.
 * @param offsetAt The zone's offset from UTC at an instant (milliseconds since the epoch), in milliseconds; it changes
 *   only on whole seconds.
 * @param wall A wall time, as milliseconds since 1970-01-01 00:00 on that clock.
 * @returns The instant, in milliseconds since the epoch.
 */
export function firstInstantReading(offsetAt: (ms: number) => number, wall: number): number {
  const before = offsetAt(wall - DAY_MS);
  const after = offsetAt(wall + DAY_MS);
  const early = wall - before; // Where the clock reads `wall` under the older offset.
  const late = wall - after; // ... and under the newer one.
  if (before === after) {
    if (offsetAt(early) === before) return early;
  } else if (before > after) {
    // Falls back: `wall` read before the change comes first; otherwise it is read once, after it.
    if (offsetAt(early) === before) return early;
    if (offsetAt(late) === after) return late;
  } else {
    // Springs forward (`late` < `early`): `wall` is before the gap, after it, or in it.
    const atEarly = offsetAt(early);
    if (atEarly === before) return early;
    const atLate = offsetAt(late);
    if (atLate === after) return late;
    if (atLate === before && atEarly === after) {
      // In the gap: the clock jumps past `wall` at the change (if it is the only one).
      const change = changeBetween(offsetAt, late, early, before);
      if (offsetAt(change) === after) return change;
    }
  }
  return scanForReading(offsetAt, wall);
}

/** The first whole second in (`from`, `to`] at which the offset is no longer `offset` (that at `from`). */
function changeBetween(offsetAt: (ms: number) => number, from: number, to: number, offset: number): number {
  // Offsets change on whole seconds, and hold for the whole second.
  let low = Math.floor(from / SECOND_MS);
  let high = Math.floor(to / SECOND_MS);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(middle * SECOND_MS) === offset) low = middle;
    else high = middle;
  }
  return high * SECOND_MS;
}

/** {@link firstInstantReading} where the zone changes offset more than once in two days: walks the changes in steps. */
function scanForReading(offsetAt: (ms: number) => number, wall: number): number {
  let at = wall - DAY_MS;
  let offset = offsetAt(at);
  for (;;) {
    const step = at + SCAN_STEP_MS;
    const change = offsetAt(step) === offset ? step : changeBetween(offsetAt, at, step, offset);
    if (at + offset >= wall) return at;
    if (change + offset > wall) return wall - offset;
    at = change;
    offset = offsetAt(at);
  }
}

function defaultPosition(): Position {
  return { timeMs: 0, firstWeekDay: floorMod(MONDAY - EPOCH_WEEKDAY, 7), month: 0, dayOfMonth: 1 };
}
