// Calls a second of CalendarPeriods#periodOf (src/core/calendar-periods.ts), not part of `npm run bench`:
//
//   node --import tsx bench/calendar-periods.ts
//
// within a period (the kept period: two comparisons), period after period (the next one's end found: one boundary),
// and at instants far apart (the period found from the clock's reading: two boundaries), in UTC and in zones read
// through Intl.DateTimeFormat.

import { CalendarPeriods, type CalendarPeriodKind } from '../src/core/calendar-periods.js';

const START_US = Date.parse('2026-03-01T00:00:00Z') * 1000;
const HOUR_US = 3_600_000_000;

/** Calls a second of `call`, timed over `calls` calls after a warm-up of the same count. */
function rate(calls: number, call: (i: number) => number): number {
  let sink = 0;
  for (let i = 0; i < calls; i += 1) sink += call(i);
  const started = performance.now();
  for (let i = 0; i < calls; i += 1) sink += call(i);
  const elapsedMs = performance.now() - started;
  if (sink === 0) console.log('(sink)');
  return Math.round((calls / elapsedMs) * 1000);
}

const rows: string[] = [];
for (const timeZone of ['UTC', 'America/New_York', 'Asia/Kathmandu']) {
  for (const period of ['hour', 'day', 'month'] as CalendarPeriodKind[]) {
    const within = new CalendarPeriods({ period, timeZone });
    const first = within.periodOf(START_US);
    const span = first.endUs - first.startUs;
    const inPeriod = rate(2_000_000, (i) => within.periodOf(first.startUs + (i % span)).index);

    const walker = new CalendarPeriods({ period, timeZone });
    let at = START_US;
    // Warm-up and timed calls walk at most 2 x 20,000 hours, 2 x 10,000 days or 2 x 600 months: to 2126 at most.
    const periodAfterPeriod = rate({ hour: 20_000, day: 10_000, month: 600, week: 1000, year: 50 }[period], () => {
      const next = walker.periodOf(at);
      at = next.endUs;
      return next.index;
    });

    const jumper = new CalendarPeriods({ period, timeZone });
    // Hours 7,919 apart (mod a year), a second further each call: rarely one of the periods kept.
    const farApart = rate(20_000, (i) => jumper.periodOf(START_US + ((i * 7919) % 8760) * HOUR_US + (i % 3600) * 1_000_000).index);
    rows.push(`| ${timeZone} | ${period} | ${inPeriod.toLocaleString('en')} | ${periodAfterPeriod.toLocaleString('en')} | ${farApart.toLocaleString('en')} |`);
  }
}
console.log('| zone | period | within a period | period after period | far apart |');
console.log('|---|---|---:|---:|---:|');
for (const row of rows) console.log(row);
