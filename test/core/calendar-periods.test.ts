import { expect } from 'chai';
import { CalendarPeriods, firstInstantReading, type CalendarPeriod, type CalendarPeriodKind } from '../../src/core/calendar-periods.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../../src/errors/invalid-option-error.js';
import { referenceInstant, referenceOffsetChanges, referencePeriod, type ReferenceConfig } from '../support/calendar-reference.js';
import { SeededRandom } from '../support/random.js';

// Replay a failure with CALENDAR_SEED=<the seed in its message>.
const SEED = Number(process.env['CALENDAR_SEED'] ?? Date.now() % 2 ** 31);

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const HOUR_US = HOUR_MS * 1000;

/** Microseconds of a UTC ISO instant, '2026-03-08T07:00:00Z'. */
const us = (iso: string): number => Date.parse(iso) * 1000;

/** A period as ISO instants and hours, to read in a failure. */
function readable(period: CalendarPeriod): { start: string; end: string; hours: number; index: number } {
  return {
    start: new Date(period.startUs / 1000).toISOString(),
    end: new Date(period.endUs / 1000).toISOString(),
    hours: (period.endUs - period.startUs) / HOUR_US,
    index: period.index,
  };
}

function periodsOf(period: CalendarPeriodKind, timeZone?: string, anchor?: Date | number): CalendarPeriods {
  return new CalendarPeriods({ period, ...(timeZone === undefined ? {} : { timeZone }), ...(anchor === undefined ? {} : { anchor }) });
}

describe('calendar periods (docs/semantics.md, "Calendar periods")', () => {
  describe('options', () => {
    it('refuses an unknown time zone, naming `timeZone`, and one that is not a string', () => {
      expect(() => periodsOf('day', 'Mars/Olympus_Mons'))
        .to.throw(InvalidOptionRangeError, /`timeZone`.*Mars\/Olympus_Mons/)
        .with.property('option', 'timeZone');
      expect(() => periodsOf('day', '')).to.throw(RangeError, /`timeZone`/);
      expect(() => new CalendarPeriods({ period: 'day', timeZone: 5 as unknown as string }))
        .to.throw(InvalidOptionTypeError, /`timeZone`/)
        .with.property('option', 'timeZone');
    });

    it('refuses a period that is not one of the five, and an anchor that is not an instant', () => {
      expect(() => periodsOf('fortnight' as CalendarPeriodKind)).to.throw(InvalidOptionRangeError, /`period`.*fortnight/);
      expect(() => periodsOf('day', 'UTC', new Date(Number.NaN)))
        .to.throw(InvalidOptionRangeError, /`anchor`/)
        .with.property('option', 'anchor');
      expect(() => periodsOf('day', 'UTC', '2026-01-15' as unknown as number)).to.throw(InvalidOptionTypeError, /`anchor`/);
      expect(() => periodsOf('day', 'UTC', 1.5)).to.throw(InvalidOptionRangeError, /`anchor`/);
      expect(() => periodsOf('day', 'UTC', 8.64e15)).to.throw(InvalidOptionRangeError, /`anchor`/);
    });

    it('refuses an instant that is not an integer number of microseconds', () => {
      const days = periodsOf('day');
      expect(() => days.periodOf(1.5e15 + 0.5)).to.throw(RangeError, /integer microseconds/);
      expect(() => days.periodOf(Number.NaN)).to.throw(RangeError, /integer microseconds/);
      expect(() => days.nextPeriodStart(2 ** 53)).to.throw(RangeError, /integer microseconds/);
    });

    it('takes the default zone as UTC, and an anchor as a Date or milliseconds alike', () => {
      const t = us('2026-05-17T13:14:15.123Z') + 456;
      expect(periodsOf('week').periodOf(t)).to.deep.equal(periodsOf('week', 'UTC').periodOf(t));
      const anchor = Date.parse('2024-01-31T06:00:00Z');
      expect(periodsOf('month', 'Europe/Berlin', anchor).periodOf(t)).to.deep.equal(periodsOf('month', 'Europe/Berlin', new Date(anchor)).periodOf(t));
    });
  });

  describe('without an anchor', () => {
    it('starts hours at :00, days at midnight, weeks on Monday, months on the 1st, years on 1 January (UTC)', () => {
      const t = us('2026-05-14T13:14:15.123Z') + 456; // A Thursday.
      const expected: Record<CalendarPeriodKind, [string, string]> = {
        hour: ['2026-05-14T13:00:00Z', '2026-05-14T14:00:00Z'],
        day: ['2026-05-14T00:00:00Z', '2026-05-15T00:00:00Z'],
        week: ['2026-05-11T00:00:00Z', '2026-05-18T00:00:00Z'],
        month: ['2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z'],
        year: ['2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z'],
      };
      for (const [kind, [start, end]] of Object.entries(expected) as [CalendarPeriodKind, [string, string]][]) {
        const period = periodsOf(kind).periodOf(t);
        expect(period, kind).to.include({ startUs: us(start), endUs: us(end) });
        expect(periodsOf(kind).nextPeriodStart(t), kind).to.equal(us(end));
      }
    });

    it('names periods from 1970-01-01 in the zone: hour, day, week (from Monday 5 January 1970), month and year indexes', () => {
      const t = us('2026-03-02T10:30:00Z');
      expect(periodsOf('hour').periodOf(us('1970-01-01T00:00:00Z')).index).to.equal(0);
      expect(periodsOf('day').periodOf(t).index).to.equal(Date.parse('2026-03-02T00:00:00Z') / DAY_MS);
      expect(periodsOf('week').periodOf(us('1970-01-05T00:00:00Z')).index).to.equal(0);
      expect(periodsOf('week').periodOf(us('1970-01-04T23:59:59Z')).index).to.equal(-1);
      expect(periodsOf('week').periodOf(t).index).to.equal((Date.parse('2026-03-02T00:00:00Z') - Date.parse('1970-01-05T00:00:00Z')) / (7 * DAY_MS));
      expect(periodsOf('month').periodOf(t).index).to.equal(56 * 12 + 2);
      expect(periodsOf('year').periodOf(t).index).to.equal(56);
      // In the zone's calendar: the 1970-01-01 of Kolkata began at 1969-12-31T18:30Z.
      expect(periodsOf('day', 'Asia/Kolkata').periodOf(us('1969-12-31T18:30:00Z')).index).to.equal(0);
      expect(periodsOf('day', 'Asia/Kolkata').periodOf(us('1969-12-31T18:30:00Z') - 1).index).to.equal(-1);
    });

    it('puts a call 1 µs before midnight in the old day, and one at midnight in the new (UTC and New York)', () => {
      const utc = periodsOf('day');
      expect(utc.periodOf(us('2026-06-30T00:00:00Z') - 1)).to.include({ startUs: us('2026-06-29T00:00:00Z'), endUs: us('2026-06-30T00:00:00Z') });
      expect(utc.periodOf(us('2026-06-30T00:00:00Z')).startUs).to.equal(us('2026-06-30T00:00:00Z'));
      const newYork = periodsOf('day', 'America/New_York');
      const midnight = us('2026-06-30T04:00:00Z'); // 00:00 EDT.
      expect(newYork.periodOf(midnight - 1)).to.include({ endUs: midnight, startUs: midnight - 24 * HOUR_US });
      expect(newYork.periodOf(midnight)).to.include({ startUs: midnight, endUs: midnight + 24 * HOUR_US });
      expect(newYork.periodOf(midnight).index).to.equal(newYork.periodOf(midnight - 1).index + 1);
      // The last day of a year, and the year itself, end 1 µs later too.
      expect(periodsOf('year', 'America/New_York').periodOf(us('2027-01-01T05:00:00Z') - 1).endUs).to.equal(us('2027-01-01T05:00:00Z'));
    });

    it('counts 29 February in leap years only (2000 and 2024 yes, 2100 no)', () => {
      const months = periodsOf('month');
      expect(readable(months.periodOf(us('2024-02-29T23:59:59Z'))).hours).to.equal(29 * 24);
      expect(readable(months.periodOf(us('2000-02-15T00:00:00Z'))).hours).to.equal(29 * 24);
      expect(readable(months.periodOf(us('2100-02-15T00:00:00Z'))).hours).to.equal(28 * 24);
      expect(readable(months.periodOf(us('2026-02-15T00:00:00Z'))).hours).to.equal(28 * 24);
      expect(periodsOf('day').periodOf(us('2024-02-29T12:00:00Z'))).to.include({ startUs: us('2024-02-29T00:00:00Z'), endUs: us('2024-03-01T00:00:00Z') });
      expect(readable(periodsOf('year').periodOf(us('2024-07-01T00:00:00Z'))).hours).to.equal(366 * 24);
      expect(readable(periodsOf('year').periodOf(us('2100-07-01T00:00:00Z'))).hours).to.equal(365 * 24);
    });
  });

  describe('with an anchor', () => {
    it('starts each month on the anchor day and time, and on the last day of a month without it (the 31st, 30th, 29th)', () => {
      const on31 = periodsOf('month', 'UTC', Date.parse('2023-01-31T08:00:00Z'));
      const starts = [];
      let period = on31.periodOf(us('2024-01-31T08:00:00Z'));
      for (let i = 0; i < 5; i += 1) {
        starts.push(new Date(period.startUs / 1000).toISOString());
        period = on31.periodOf(period.endUs);
      }
      expect(starts).to.deep.equal([
        '2024-01-31T08:00:00.000Z',
        '2024-02-29T08:00:00.000Z',
        '2024-03-31T08:00:00.000Z',
        '2024-04-30T08:00:00.000Z',
        '2024-05-31T08:00:00.000Z',
      ]);
      expect(on31.periodOf(us('2025-03-01T00:00:00Z')).startUs).to.equal(us('2025-02-28T08:00:00Z'));
      expect(on31.periodOf(us('2024-01-31T08:00:00Z') - 1).startUs).to.equal(us('2023-12-31T08:00:00Z'));
      const on30 = periodsOf('month', 'UTC', Date.parse('2023-04-30T00:00:00Z'));
      expect(on30.periodOf(us('2025-03-01T00:00:00Z'))).to.include({ startUs: us('2025-02-28T00:00:00Z'), endUs: us('2025-03-30T00:00:00Z') });
      const on29 = periodsOf('month', 'UTC', Date.parse('2023-05-29T00:00:00Z'));
      expect(on29.periodOf(us('2025-03-01T00:00:00Z'))).to.include({ startUs: us('2025-02-28T00:00:00Z'), endUs: us('2025-03-29T00:00:00Z') });
      expect(on29.periodOf(us('2024-03-01T00:00:00Z'))).to.include({ startUs: us('2024-02-29T00:00:00Z'), endUs: us('2024-03-29T00:00:00Z') });
    });

    it('starts a year anchored on 29 February on 28 February in other years', () => {
      const years = periodsOf('year', 'UTC', Date.parse('2024-02-29T12:00:00Z'));
      expect(years.periodOf(us('2025-06-01T00:00:00Z'))).to.include({ startUs: us('2025-02-28T12:00:00Z'), endUs: us('2026-02-28T12:00:00Z') });
      expect(years.periodOf(us('2028-03-01T00:00:00Z'))).to.include({ startUs: us('2028-02-29T12:00:00Z'), endUs: us('2029-02-28T12:00:00Z') });
      expect(years.periodOf(us('2028-03-01T00:00:00Z')).index).to.equal(2028 - 1970);
    });

    it('starts hours at the minute, days at the time and weeks on the weekday of the anchor, wherever it is', () => {
      const anchor = Date.parse('2019-07-17T10:45:30.250Z'); // A Wednesday, 16:30:30.250 in Kathmandu (+05:45).
      const t = us('2026-05-14T13:14:15Z'); // A Thursday, 18:59:15 in Kathmandu.
      expect(periodsOf('hour', 'Asia/Kathmandu', anchor).periodOf(t)).to.include({
        startUs: us('2026-05-14T12:45:30.250Z'),
        endUs: us('2026-05-14T13:45:30.250Z'),
      });
      expect(periodsOf('day', 'Asia/Kathmandu', anchor).periodOf(t)).to.include({
        startUs: us('2026-05-14T10:45:30.250Z'),
        endUs: us('2026-05-15T10:45:30.250Z'),
      });
      expect(periodsOf('week', 'Asia/Kathmandu', anchor).periodOf(t)).to.include({
        startUs: us('2026-05-13T10:45:30.250Z'),
        endUs: us('2026-05-20T10:45:30.250Z'),
      });
      // Period 0 of the anchored week is the first to start at or after 1970-01-01 00:00 in the zone: Wednesday the
      // 7th, 16:30:30.250 in Kathmandu, then at +05:30.
      expect(periodsOf('week', 'Asia/Kathmandu', anchor).periodOf(us('1970-01-07T11:00:30.250Z')).index).to.equal(0);
      expect(periodsOf('week', 'Asia/Kathmandu', anchor).periodOf(us('1970-01-07T11:00:30.250Z') - 1).index).to.equal(-1);
    });
  });

  describe('clocks that jump', () => {
    it('New York, 8 March 2026: a 23-hour day, the hour from 02:00 skipped, a 02:30 start at 03:00 EDT', () => {
      const day = periodsOf('day', 'America/New_York').periodOf(us('2026-03-08T12:00:00Z'));
      expect(readable(day)).to.include({ start: '2026-03-08T05:00:00.000Z', end: '2026-03-09T04:00:00.000Z', hours: 23 });
      const hours = periodsOf('hour', 'America/New_York');
      const one = hours.periodOf(us('2026-03-08T06:30:00Z')); // 01:30 EST.
      const three = hours.periodOf(us('2026-03-08T07:00:00Z')); // 03:00 EDT.
      expect(readable(one)).to.include({ start: '2026-03-08T06:00:00.000Z', end: '2026-03-08T07:00:00.000Z', hours: 1 });
      expect(readable(three)).to.include({ start: '2026-03-08T07:00:00.000Z', end: '2026-03-08T08:00:00.000Z', hours: 1 });
      expect(three.index - one.index, 'the index of 02:00 is skipped').to.equal(2);
      const at0230 = periodsOf('day', 'America/New_York', Date.parse('2026-01-10T07:30:00Z')); // 02:30 EST.
      expect(readable(at0230.periodOf(us('2026-03-08T12:00:00Z')))).to.include({
        start: '2026-03-08T07:00:00.000Z', // 03:00 EDT, the first instant after the gap.
        end: '2026-03-09T06:30:00.000Z', // 02:30 EDT.
        hours: 23.5,
      });
      expect(readable(at0230.periodOf(us('2026-03-08T06:59:59Z')))).to.include({ start: '2026-03-07T07:30:00.000Z', hours: 23.5 });
    });

    it('New York, 1 November 2026: a 25-hour day, the repeated hour from 01:00 one period of two hours, a 01:30 start at the first', () => {
      const day = periodsOf('day', 'America/New_York').periodOf(us('2026-11-01T12:00:00Z'));
      expect(readable(day)).to.include({ start: '2026-11-01T04:00:00.000Z', end: '2026-11-02T05:00:00.000Z', hours: 25 });
      const hours = periodsOf('hour', 'America/New_York');
      const repeated = hours.periodOf(us('2026-11-01T06:15:00Z')); // 01:15 EST, the second time.
      expect(readable(repeated)).to.include({ start: '2026-11-01T05:00:00.000Z', end: '2026-11-01T07:00:00.000Z', hours: 2 });
      expect(hours.periodOf(us('2026-11-01T05:15:00Z'))).to.equal(repeated); // 01:15 EDT, the first time.
      expect(hours.periodOf(us('2026-11-01T07:00:00Z')).index).to.equal(repeated.index + 1);
      const at0130 = periodsOf('day', 'America/New_York', Date.parse('2026-01-10T06:30:00Z')); // 01:30 EST.
      expect(readable(at0130.periodOf(us('2026-11-01T06:45:00Z')))).to.include({
        start: '2026-11-01T05:30:00.000Z', // 01:30 EDT, the first reading.
        end: '2026-11-02T06:30:00.000Z',
        hours: 25,
      });
    });

    it('London, 29 March and 25 October 2026: days of 23 and 25 hours', () => {
      const days = periodsOf('day', 'Europe/London');
      expect(readable(days.periodOf(us('2026-03-29T12:00:00Z')))).to.include({ start: '2026-03-29T00:00:00.000Z', end: '2026-03-29T23:00:00.000Z', hours: 23 });
      expect(readable(days.periodOf(us('2026-10-25T12:00:00Z')))).to.include({ start: '2026-10-24T23:00:00.000Z', end: '2026-10-26T00:00:00.000Z', hours: 25 });
      const hours = periodsOf('hour', 'Europe/London');
      expect(readable(hours.periodOf(us('2026-03-29T00:59:59Z')))).to.include({ end: '2026-03-29T01:00:00.000Z', hours: 1 });
      expect(readable(hours.periodOf(us('2026-10-25T01:30:00Z')))).to.include({ start: '2026-10-25T00:00:00.000Z', end: '2026-10-25T02:00:00.000Z', hours: 2 });
    });

    it('São Paulo, whose clocks changed at midnight until 2019: a day that starts at 01:00, and one that reads 23:00 twice', () => {
      const days = periodsOf('day', 'America/Sao_Paulo');
      expect(readable(days.periodOf(us('2018-11-04T12:00:00Z')))).to.include({ start: '2018-11-04T03:00:00.000Z', end: '2018-11-05T02:00:00.000Z', hours: 23 });
      const long = days.periodOf(us('2019-02-17T02:30:00Z')); // 23:30 on the 16th, the second time.
      expect(readable(long)).to.include({ start: '2019-02-16T02:00:00.000Z', end: '2019-02-17T03:00:00.000Z', hours: 25 });
    });

    it('Apia skipped 30 December 2011: the 29th ends where the 31st starts, and the index skips one', () => {
      const days = periodsOf('day', 'Pacific/Apia');
      const before = days.periodOf(us('2011-12-30T09:59:59.999999Z'));
      const after = days.periodOf(us('2011-12-30T10:00:00Z'));
      expect(readable(before)).to.include({ start: '2011-12-29T10:00:00.000Z', end: '2011-12-30T10:00:00.000Z', hours: 24 });
      expect(readable(after)).to.include({ start: '2011-12-30T10:00:00.000Z', end: '2011-12-31T10:00:00.000Z', hours: 24 });
      expect(after.index - before.index).to.equal(2);
      // The month of December 2011 there had 30 days.
      expect(readable(periodsOf('month', 'Pacific/Apia').periodOf(us('2011-12-15T00:00:00Z'))).hours).to.equal(30 * 24);
    });

    it('Lord Howe, whose clock moves 30 minutes: the hour it jumps into is half an hour, the one it falls back in an hour and a half', () => {
      const hours = periodsOf('hour', 'Australia/Lord_Howe');
      // 4 October 2026 02:00 +10:30 -> 02:30 +11; 5 April 2026 02:00 +11 -> 01:30 +10:30.
      expect(readable(hours.periodOf(us('2026-10-03T15:40:00Z')))).to.include({
        start: '2026-10-03T15:30:00.000Z',
        end: '2026-10-03T16:00:00.000Z',
        hours: 0.5,
      });
      expect(readable(hours.periodOf(us('2026-04-04T15:10:00Z')))).to.include({
        start: '2026-04-04T14:00:00.000Z',
        end: '2026-04-04T15:30:00.000Z',
        hours: 1.5,
      });
      const days = periodsOf('day', 'Australia/Lord_Howe');
      expect(readable(days.periodOf(us('2026-10-04T06:00:00Z'))).hours).to.equal(23.5);
      expect(readable(days.periodOf(us('2026-04-05T06:00:00Z'))).hours).to.equal(24.5);
    });

    it('Kolkata, Kathmandu and Chatham: hours start at :00 on the local clock, :30, :15 and :15 in UTC', () => {
      const t = us('2026-07-01T12:20:00Z');
      expect(readable(periodsOf('hour', 'Asia/Kolkata').periodOf(t))).to.include({ start: '2026-07-01T11:30:00.000Z', hours: 1 });
      expect(readable(periodsOf('hour', 'Asia/Kathmandu').periodOf(t))).to.include({ start: '2026-07-01T12:15:00.000Z', hours: 1 });
      expect(readable(periodsOf('hour', 'Pacific/Chatham').periodOf(t))).to.include({ start: '2026-07-01T12:15:00.000Z', hours: 1 });
    });
  });

  describe('the periods kept', () => {
    it('answers the same object for every instant of the latest two periods, and the right one after a jump back', () => {
      const days = periodsOf('day', 'Europe/Berlin');
      const today = days.periodOf(us('2026-05-14T10:00:00Z'));
      expect(days.periodOf(today.startUs)).to.equal(today);
      expect(days.periodOf(today.endUs - 1)).to.equal(today);
      const tomorrow = days.periodOf(today.endUs);
      expect(tomorrow).to.include({ startUs: today.endUs, index: today.index + 1 });
      expect(days.periodOf(today.endUs - 1), 'a late call of the day before').to.equal(today);
      expect(days.periodOf(today.endUs)).to.equal(tomorrow);
      const later = days.periodOf(us('2030-01-01T00:00:00Z'));
      const again = days.periodOf(today.startUs);
      expect(again).to.not.equal(today);
      expect(again).to.deep.equal(today);
      expect(days.periodOf(us('2030-01-01T00:00:00Z'))).to.equal(later);
    });
  });

  describe('firstInstantReading, on clocks made up to test it', () => {
    /** A clock whose offset (ms) is `offsets[i]` from `changes[i - 1]` (ms) on, and `offsets[0]` before. */
    const clock =
      (changes: number[], offsets: number[]) =>
      (ms: number): number => {
        let i = 0;
        while (i < changes.length && ms >= (changes[i] as number)) i += 1;
        return offsets[i] as number;
      };
    /** The first instant reading `wall` or later, second by second over four days, then within the second. */
    const bruteForce = (offsetAt: (ms: number) => number, wall: number): number => {
      for (let second = Math.floor((wall - 2 * DAY_MS) / 1000) * 1000; ; second += 1000) {
        const offset = offsetAt(second);
        if (second + 999 + offset >= wall) return Math.max(second, wall - offset);
      }
    };
    const T = Date.parse('2026-03-08T07:00:00Z');
    const cases: [string, number[], number[]][] = [
      ['one change forward', [T], [-5 * HOUR_MS, -4 * HOUR_MS]],
      ['one change back', [T], [-4 * HOUR_MS, -5 * HOUR_MS]],
      ['a whole day skipped', [T], [-10 * HOUR_MS, 14 * HOUR_MS]],
      ['two changes forward within five hours (walked)', [T, T + 5 * HOUR_MS], [0, HOUR_MS, 3 * HOUR_MS]],
      ['forward then back within two days (walked)', [T, T + 30 * HOUR_MS], [0, 2 * HOUR_MS, -HOUR_MS]],
      ['back then forward within 40 minutes (walked)', [T, T + 40 * MINUTE_MS], [HOUR_MS, 0, 2 * HOUR_MS]],
      ['a change on a whole second that is not a whole minute', [T + 17_000], [0, 1_800_000]],
    ];
    for (const [name, changes, offsets] of cases) {
      it(`finds the first instant a clock reads each wall time: ${name}`, () => {
        const random = new SeededRandom(SEED);
        const offsetAt = clock(changes, offsets);
        const walls = [];
        for (const change of changes) {
          for (const offset of offsets) for (const delta of [-1, 0, 1, 999, 1000, 30 * MINUTE_MS]) walls.push(change + offset + delta);
        }
        for (let i = 0; i < 60; i += 1) walls.push(T + random.int(-2 * DAY_MS, 3 * DAY_MS));
        for (const wall of walls) {
          expect(firstInstantReading(offsetAt, wall), `wall ${new Date(wall).toISOString()} (seed ${SEED})`).to.equal(bruteForce(offsetAt, wall));
        }
      });
    }
  });

  describe('against the reference model (test/support/calendar-reference.ts)', () => {
    const ZONES = [
      'UTC',
      'America/New_York',
      'Europe/London',
      'Europe/Berlin',
      'Australia/Sydney',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Pacific/Chatham',
      'America/Sao_Paulo',
      'Pacific/Apia',
    ];
    const KINDS: CalendarPeriodKind[] = ['hour', 'day', 'week', 'month', 'year'];
    // Wall times in each zone: the 31st at 02:30 (in the spring gap of New York, Berlin, Sydney), a 29 February at
    // 01:30:15.250 (repeated when New York and London fall back), the 30th 1 ms before midnight, a Sunday at 02:30
    // (the weekday of most changes).
    const ANCHOR_WALLS = ['2019-01-31T02:30', '2020-02-29T01:30:15.250', '2021-04-30T23:59:59.999', '2022-03-20T02:30'];
    const FROM_MS = Date.parse('2000-01-01T00:00:00Z');
    const TO_MS = Date.parse('2041-01-01T00:00:00Z');
    const NEAR_MS: Record<CalendarPeriodKind, number> = { hour: 3 * HOUR_MS, day: 2 * DAY_MS, week: 8 * DAY_MS, month: 32 * DAY_MS, year: 32 * DAY_MS };

    for (const [z, timeZone] of ZONES.entries()) {
      it(`${timeZone}: every kind, with and without anchors, at random instants of 2000-2040 and near its offset changes`, function () {
        this.timeout(60_000);
        const random = new SeededRandom(SEED + z);
        const changes = referenceOffsetChanges(timeZone, FROM_MS, TO_MS).map(([at]) => at);
        const instant = (kind: CalendarPeriodKind): number => {
          if (changes.length > 0 && random.chance(0.5)) {
            return (random.pick(changes) + random.int(-NEAR_MS[kind], NEAR_MS[kind])) * 1000 + random.int(0, 999);
          }
          return random.int(0, (TO_MS - FROM_MS) / DAY_MS - 1) * DAY_MS * 1000 + FROM_MS * 1000 + random.int(0, DAY_MS * 1000 - 1);
        };
        const randomAnchor = Math.floor(instant('day') / 1000);
        const anchors: (number | undefined)[] = [undefined, ...ANCHOR_WALLS.map((wall) => referenceInstant(timeZone, wall)), randomAnchor];
        for (const period of KINDS) {
          for (const anchorMs of anchors) {
            const config: ReferenceConfig = anchorMs === undefined ? { period, timeZone } : { period, timeZone, anchorMs };
            const periods = periodsOf(period, timeZone, anchorMs);
            for (let i = 0; i < 8; i += 1) {
              const t = instant(period);
              const what = `${period} in ${timeZone}, anchor ${anchorMs === undefined ? 'none' : new Date(anchorMs).toISOString()}, at ${new Date(t / 1000).toISOString()} (${t} µs, seed ${SEED})`;
              const found = periods.periodOf(t);
              expect(readable(found), what).to.deep.equal(readable(referencePeriod(config, t)));
              expect(found.startUs <= t && t < found.endUs, what).to.equal(true);
              // Its edges, by this instance (from its kept periods) and by a fresh one (from the clock's reading).
              const next = periods.periodOf(found.endUs);
              expect(readable(next), `the next after ${what}`).to.deep.equal(readable(referencePeriod(config, found.endUs)));
              expect(next.index, what).to.be.above(found.index);
              expect(periodsOf(period, timeZone, anchorMs).periodOf(found.endUs - 1), what).to.deep.equal(found);
              expect(periodsOf(period, timeZone, anchorMs).periodOf(found.startUs), what).to.deep.equal(found);
              expect(periodsOf(period, timeZone, anchorMs).periodOf(found.startUs - 1).endUs, what).to.equal(found.startUs);
            }
          }
        }
      });
    }

    it('walks consecutive periods across offset changes in each zone, every kind and anchor, each one as a fresh instance finds it', function () {
      this.timeout(60_000);
      const random = new SeededRandom(SEED ^ 0xca1);
      const NOMINAL_MS: Record<CalendarPeriodKind, number> = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS, month: 30 * DAY_MS, year: 365 * DAY_MS };
      for (const timeZone of ZONES) {
        const changes = referenceOffsetChanges(timeZone, FROM_MS, TO_MS).map(([at]) => at);
        // Apia skipped a day in December 2011: its week, month and year were a day shorter, and a day anchored at 02:30 21.5 hours.
        const skipped = timeZone === 'Pacific/Apia' ? DAY_MS : 0;
        const lengths: Record<CalendarPeriodKind, [number, number]> = {
          // An hour whose wall-clock readings the clock skips but for 1 ms lasts 1 ms (anchored at :59:59.999).
          hour: [1, 2 * HOUR_MS],
          day: [skipped === 0 ? 23 * HOUR_MS : 1, 25 * HOUR_MS],
          week: [7 * DAY_MS - HOUR_MS - skipped, 7 * DAY_MS + HOUR_MS],
          month: [28 * DAY_MS - HOUR_MS - skipped, 31 * DAY_MS + HOUR_MS],
          year: [365 * DAY_MS - HOUR_MS - skipped, 366 * DAY_MS + HOUR_MS],
        };
        const anchors = [undefined, ...ANCHOR_WALLS.map((wall) => referenceInstant(timeZone, wall))];
        for (const period of KINDS) {
          for (const anchorMs of anchors) {
            const periods = periodsOf(period, timeZone, anchorMs);
            // Years from 2000 + 20 years on (the bounds above would not hold for some zones' history).
            const around = changes.length > 0 && period !== 'year' ? random.pick(changes) : FROM_MS + random.int(20 * 365, 40 * 365) * DAY_MS;
            let current = periods.periodOf((around - 20 * NOMINAL_MS[period]) * 1000);
            for (let i = 0; i < 40; i += 1) {
              const what = `${period} in ${timeZone}, anchor ${String(anchorMs)}, after ${JSON.stringify(readable(current))} (seed ${SEED})`;
              const next = periods.periodOf(current.endUs);
              expect(next.startUs, what).to.equal(current.endUs);
              expect(next.index, what).to.be.above(current.index);
              expect((next.endUs - next.startUs) / 1000, what).to.be.within(...lengths[period]);
              expect(periodsOf(period, timeZone, anchorMs).periodOf(next.endUs - 1), what).to.deep.equal(next);
              current = next;
            }
          }
        }
      }
    });
  });
});
