// An independent model of calendar periods (docs/semantics.md, "Calendar periods"), built another way than
// src/core/calendar-periods.ts: it reads the zone's offset from Intl's offset name ("GMT+05:45"), not from the wall
// clock's fields; it finds the zone's offset changes by scanning (every 30 minutes, then minute by minute); it steps
// the calendar with Date's UTC setters; and it reads the rule in its other form: an instant belongs to the period in
// which the latest wall-clock reading so far falls.
//
// Assumptions, checked where they are used: offsets change on whole minutes, at most once in 30 minutes, and the
// clock never falls back by more than 30 hours.

import type { CalendarPeriodKind } from '../../src/core/calendar-periods.js';

/** A configuration of calendar periods, the anchor in milliseconds. */
export interface ReferenceConfig {
  readonly period: CalendarPeriodKind;
  readonly timeZone: string;
  readonly anchorMs?: number;
}

/** A period as the model finds it. */
export interface ReferencePeriod {
  readonly startUs: number;
  readonly endUs: number;
  readonly index: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const SCAN_MS = 30 * MINUTE_MS;

const offsetNames = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `ms`, in milliseconds, read from Intl's long offset name. */
export function referenceOffsetMs(timeZone: string, ms: number): number {
  let format = offsetNames.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetNames.set(timeZone, format);
  }
  const text = format.format(ms);
  const match = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text);
  if (match === null) throw new Error(`unreadable offset name: ${text}`);
  if (match[1] === undefined) return 0;
  const size = (Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0)) * 1000;
  return match[1] === '-' ? -size : size;
}

/** A stretch of time with one offset: [startMs, endMs). */
interface Stretch {
  readonly startMs: number;
  readonly endMs: number;
  readonly offsetMs: number;
}

/** The zone's stretches of constant offset covering [fromMs, toMs), found by scanning. */
function stretches(timeZone: string, fromMs: number, toMs: number): Stretch[] {
  const found: Stretch[] = [];
  let start = fromMs;
  let offset = referenceOffsetMs(timeZone, fromMs);
  for (let sample = Math.floor(fromMs / MINUTE_MS) * MINUTE_MS; sample < toMs; sample += SCAN_MS) {
    const next = Math.min(sample + SCAN_MS, toMs);
    const nextOffset = referenceOffsetMs(timeZone, next);
    if (nextOffset === offset) continue;
    // A change in (sample, next]: the first whole minute with the new offset.
    let change = Math.floor(sample / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
    while (referenceOffsetMs(timeZone, change) === offset) change += MINUTE_MS;
    if (referenceOffsetMs(timeZone, change) !== nextOffset || referenceOffsetMs(timeZone, change - 1) !== offset) {
      throw new Error(`${timeZone}: an offset change at ${new Date(change).toISOString()} that is not on a whole minute, or two in 30 minutes`);
    }
    found.push({ startMs: start, endMs: change, offsetMs: offset });
    start = change;
    offset = nextOffset;
  }
  found.push({ startMs: start, endMs: toMs, offsetMs: offset });
  return found;
}

/** The first instant (ms) at which the zone's clock reads `wall` or later. */
function firstReading(timeZone: string, wall: number): number {
  for (const { startMs, endMs, offsetMs } of stretches(timeZone, wall - 30 * HOUR_MS, wall + 30 * HOUR_MS)) {
    if (startMs + offsetMs >= wall) return startMs;
    if (endMs + offsetMs > wall) return wall - offsetMs;
  }
  throw new Error(`${timeZone}: the clock never reads ${new Date(wall).toISOString()} within 30 hours of it`);
}

/** The latest wall-clock reading (µs, as UTC) at or before `instantUs`. */
function highestReading(timeZone: string, instantUs: number): number {
  const instantMs = Math.floor(instantUs / 1000);
  let highest = -Infinity;
  for (const { startMs, endMs, offsetMs } of stretches(timeZone, instantMs - 30 * HOUR_MS, instantMs + 1)) {
    if (startMs > instantMs) break;
    highest = Math.max(highest, Math.min(endMs * 1000 - 1, instantUs) + offsetMs * 1000);
  }
  return highest;
}

/** Where periods start on the wall clock, read from the anchor. */
interface Anchor {
  readonly month: number;
  readonly date: number;
  readonly weekday: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
  readonly ms: number;
}

function anchorOf(config: ReferenceConfig): Anchor {
  if (config.anchorMs === undefined) return { month: 0, date: 1, weekday: 1, hours: 0, minutes: 0, seconds: 0, ms: 0 };
  const wall = new Date(config.anchorMs + referenceOffsetMs(config.timeZone, config.anchorMs));
  return {
    month: wall.getUTCMonth(),
    date: wall.getUTCDate(),
    weekday: wall.getUTCDay(),
    hours: wall.getUTCHours(),
    minutes: wall.getUTCMinutes(),
    seconds: wall.getUTCSeconds(),
    ms: wall.getUTCMilliseconds(),
  };
}

/** Sets `date` to day `day` of `month` of its year, or to the month's last day when it has fewer. */
function setDayOfMonth(date: Date, month: number, day: number): void {
  date.setUTCDate(1);
  date.setUTCMonth(month);
  date.setUTCDate(day);
  if (date.getUTCMonth() !== month) date.setUTCDate(0); // Ran into the next month: back to the last day of this one.
}

/** The wall-clock start of the period after the one that starts at `start` (both as UTC dates). */
function nextStart(period: CalendarPeriodKind, anchor: Anchor, start: Date): Date {
  const next = new Date(start);
  if (period === 'hour') next.setUTCHours(next.getUTCHours() + 1);
  else if (period === 'day') next.setUTCDate(next.getUTCDate() + 1);
  else if (period === 'week') next.setUTCDate(next.getUTCDate() + 7);
  else if (period === 'month') {
    next.setUTCDate(1);
    next.setUTCMonth(next.getUTCMonth() + 1);
    setDayOfMonth(next, next.getUTCMonth(), anchor.date);
  } else {
    next.setUTCDate(1);
    next.setUTCFullYear(next.getUTCFullYear() + 1);
    setDayOfMonth(next, anchor.month, anchor.date);
  }
  return next;
}

/** The latest wall-clock period start at or before the wall time `wall` (as UTC dates). */
function startAtOrBefore(period: CalendarPeriodKind, anchor: Anchor, wall: Date): Date {
  const start = new Date(wall);
  if (period === 'hour') {
    start.setUTCMinutes(anchor.minutes, anchor.seconds, anchor.ms);
    if (start > wall) start.setUTCHours(start.getUTCHours() - 1);
    return start;
  }
  start.setUTCHours(anchor.hours, anchor.minutes, anchor.seconds, anchor.ms);
  if (period === 'day') {
    if (start > wall) start.setUTCDate(start.getUTCDate() - 1);
  } else if (period === 'week') {
    while (start.getUTCDay() !== anchor.weekday || start > wall) start.setUTCDate(start.getUTCDate() - 1);
  } else if (period === 'month') {
    setDayOfMonth(start, start.getUTCMonth(), anchor.date);
    if (start > wall) {
      start.setUTCDate(1);
      start.setUTCMonth(start.getUTCMonth() - 1);
      setDayOfMonth(start, start.getUTCMonth(), anchor.date);
    }
  } else {
    setDayOfMonth(start, anchor.month, anchor.date);
    if (start > wall) {
      start.setUTCDate(1);
      start.setUTCFullYear(start.getUTCFullYear() - 1);
      setDayOfMonth(start, anchor.month, anchor.date);
    }
  }
  return start;
}

/** Period 0 counts from the first wall-clock start at or after 1970-01-01 00:00; the index counts starts from it. */
function indexOf(period: CalendarPeriodKind, anchor: Anchor, start: Date): number {
  if (period === 'month') return (start.getUTCFullYear() - 1970) * 12 + start.getUTCMonth();
  if (period === 'year') return start.getUTCFullYear() - 1970;
  let first = startAtOrBefore(period, anchor, new Date(Date.UTC(1970, 0, 1)));
  if (first.getTime() < Date.UTC(1970, 0, 1)) first = nextStart(period, anchor, first);
  const length = { hour: HOUR_MS, day: 24 * HOUR_MS, week: 7 * 24 * HOUR_MS }[period];
  return Math.round((start.getTime() - first.getTime()) / length);
}

/** The period that holds `instantUs`, by the model. */
export function referencePeriod(config: ReferenceConfig, instantUs: number): ReferencePeriod {
  const anchor = anchorOf(config);
  const reached = new Date(Math.floor(highestReading(config.timeZone, instantUs) / 1000));
  const wallStart = startAtOrBefore(config.period, anchor, reached);
  const wallEnd = nextStart(config.period, anchor, wallStart);
  return {
    startUs: firstReading(config.timeZone, wallStart.getTime()) * 1000,
    endUs: firstReading(config.timeZone, wallEnd.getTime()) * 1000,
    index: indexOf(config.period, anchor, wallStart),
  };
}

/** The first instant (ms) at which the zone's clock reads the wall time `wallIso` ('2026-03-08T02:30') or later. */
export function referenceInstant(timeZone: string, wallIso: string): number {
  return firstReading(timeZone, Date.parse(`${wallIso}Z`));
}

/** The zone's offset changes in [fromMs, toMs), found day by day and then by the scan: [instant, offset before, after]. */
export function referenceOffsetChanges(timeZone: string, fromMs: number, toMs: number): [number, number, number][] {
  const changes: [number, number, number][] = [];
  let offset = referenceOffsetMs(timeZone, fromMs);
  for (let day = fromMs; day < toMs; day += 24 * HOUR_MS) {
    const next = referenceOffsetMs(timeZone, day + 24 * HOUR_MS);
    if (next === offset) continue;
    const pieces = stretches(timeZone, day, day + 24 * HOUR_MS + 1);
    for (let i = 1; i < pieces.length; i += 1) {
      const [before, after] = [pieces[i - 1], pieces[i]];
      if (before !== undefined && after !== undefined) changes.push([after.startMs, before.offsetMs, after.offsetMs]);
    }
    offset = next;
  }
  return changes;
}
