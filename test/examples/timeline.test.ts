// The demo's text rendering (examples/support/timeline.ts) on a tiny
// hand-made list of attempts, and the determinism of its scenario generator
// (examples/support/scenario.ts).

import { expect } from 'chai';
import { generateScenario, mulberry32 } from '../../examples/support/scenario.js';
import {
  GLYPHS,
  MAX_LINE_WIDTH,
  renderBlockedStreaks,
  renderLegend,
  renderSummary,
  renderTimeline,
  rowCells,
  stripAnsi,
  type Attempt,
  type TimelineOptions,
} from '../../examples/support/timeline.js';

function attempt(user: string, atMs: number, flags: { count?: boolean; gap?: boolean } = {}, waitMs = 0): Attempt {
  const blockedDueToCount = flags.count ?? false;
  const blockedDueToMinDifference = flags.gap ?? false;
  return {
    user,
    atMs,
    blocked: blockedDueToCount || blockedDueToMinDifference,
    blockedDueToCount,
    blockedDueToMinDifference,
    millisecondsUntilAllowed: waitMs,
  };
}

// 10 s in 2 s columns (5 columns), a tick every 4 s.
const attempts: Attempt[] = [
  attempt('ann', 0, {}, 3000), // column 0: sent...
  attempt('ann', 500, { gap: true }, 2500), // ...and blocked: both
  attempt('ann', 4000, {}, 3000), // column 2: sent
  attempt('ann', 6100, { count: true, gap: true }, 9000), // column 3: blocked by the count (and the gap)
  attempt('bob', 2000, { gap: true }, 1000), // column 1: blocked by the gap only
  attempt('bob', 8000, { count: true }, 1500), // column 4: blocked by the count...
  attempt('bob', 9000, { gap: true }, 500), // ...and by the gap only: the count wins
  attempt('bob', 10_000), // outside the picture: ignored there
];

const options: TimelineOptions = {
  rows: [
    { id: 'ann', label: 'ann' },
    { id: 'bob', label: 'bob' },
  ],
  durationMs: 10_000,
  bucketMs: 2_000,
  labelEveryMs: 4_000,
  color: false,
};

describe('demo timeline renderer', () => {
  it('puts the right glyph in the right column', () => {
    expect(rowCells(attempts, 'ann', 10_000, 2_000)).to.deep.equal(['both', 'none', 'sent', 'count', 'none']);
    expect(rowCells(attempts, 'bob', 10_000, 2_000)).to.deep.equal(['none', 'gap', 'none', 'none', 'count']);
    const { sent, both, count, gap, none } = GLYPHS;
    const lines = renderTimeline(attempts, options);
    expect(lines[0]).to.equal(`  ann  ${both}${none}${sent}${count}${none}`);
    expect(lines[1]).to.equal(`  bob  ${none}${gap}${none}${none}${count}`);
  });

  it('uses five distinct glyphs', () => {
    expect(new Set(Object.values(GLYPHS)).size).to.equal(5);
  });

  it('draws a time axis with a tick and a label at every multiple of labelEveryMs', () => {
    const lines = renderTimeline(attempts, { ...options, bucketMs: 1_000, labelEveryMs: 5_000 });
    expect(lines).to.have.length(4);
    expect(lines[2]).to.equal('       └────┴────┘');
    expect(lines[3]).to.equal('       0:00 0:05 0:10');
    // With 2 s columns, the labels at 0:04 and 0:08 would touch the one before: they are left out, the ticks stay.
    expect(renderTimeline(attempts, options).slice(2)).to.deep.equal(['       └─┴─┴┘', '       0:00']);
  });

  it('prints a legend that names every glyph and the column width', () => {
    const legend = renderLegend(2_000, false).join('\n');
    for (const glyph of Object.values(GLYPHS)) expect(legend).to.include(`${glyph} `);
    expect(legend).to.include('sent');
    expect(legend).to.include('window full');
    expect(legend).to.include('too soon');
    expect(legend).to.include('one column = 2 s');
  });

  it('counts both flags of an attempt in the summary, and reports the longest wait', () => {
    const users = [
      { id: 'ann', behaviour: 'tester' },
      { id: 'bob', behaviour: 'other' },
    ];
    const [header, ann, bob] = renderSummary(attempts, users, false);
    expect(header).to.match(/attempts +sent +blocked by count +blocked by gap +longest wait/);
    expect(ann?.trim().split(/ {2,}/)).to.deep.equal(['ann', 'tester', '4', '2', '1', '2', '9.0 s']);
    expect(bob?.trim().split(/ {2,}/)).to.deep.equal(['bob', 'other', '4', '1', '1', '2', '1.5 s']);
    expect(renderSummary(attempts, users, false).join('\n'), 'the column is explained').to.include('longest wait: the longest millisecondsUntilAllowed');
  });

  it('describes each blocked streak, the wait the limiter gave and the next send', () => {
    const lines = renderBlockedStreaks(attempts, ['ann', 'bob'], false);
    expect(lines).to.deep.equal([
      '  0:00.5          ann  1 blocked (by count 0, by gap 1), retry at 0:03.0; sent again at 0:04.0',
      '  0:02.0–0:09.0   bob  3 blocked (by count 1, by gap 2), retry at 0:09.5; sent again at 0:10.0',
      '  0:06.1          ann  1 blocked (by count 1, by gap 1), retry at 0:15.1; never sent again',
    ]);
  });

  it('keeps every line within 120 characters, at the size of the demo', () => {
    const color = true;
    const scenario = generateScenario(1);
    const demoAttempts = scenario.events.map((event, i) => attempt(event.user, event.atMs, { count: i % 3 === 0 }, 59_999));
    const rows = scenario.users.map((user) => ({ id: user.id, label: user.id }));
    const lines = [
      ...renderTimeline(demoAttempts, { rows, durationMs: 180_000, bucketMs: 2_000, labelEveryMs: 30_000, color }),
      ...renderLegend(2_000, color),
      ...renderBlockedStreaks(
        demoAttempts,
        scenario.users.map((user) => user.id),
        color,
      ),
      ...renderSummary(demoAttempts, scenario.users, color),
    ];
    expect(MAX_LINE_WIDTH).to.equal(120);
    for (const line of lines) expect(stripAnsi(line).length, line).to.be.at.most(120);
  });

  it('writes no ANSI codes when color is off, and only adds them when it is on', () => {
    const render = (color: boolean): string[] => [
      ...renderTimeline(attempts, { ...options, color }),
      ...renderLegend(2_000, color),
      ...renderBlockedStreaks(attempts, ['ann', 'bob'], color),
      ...renderSummary(attempts, [{ id: 'ann', behaviour: 'tester' }], color),
    ];
    const plain = render(false);
    for (const line of plain) expect(line).not.to.include('\u001b');
    const colored = render(true);
    expect(colored.join('\n')).to.include('\u001b[');
    expect(colored.map(stripAnsi)).to.deep.equal(plain);
  });
});

describe('demo scenario generator', () => {
  it('gives the same events for the same seed, and other events for another seed', () => {
    expect(generateScenario(42)).to.deep.equal(generateScenario(42));
    expect(generateScenario(42).events).not.to.deep.equal(generateScenario(43).events);
    const a = mulberry32(7);
    const b = mulberry32(7);
    for (let i = 0; i < 5; i += 1) expect(a()).to.equal(b());
  });

  it('merges every user into one time-ordered list within the duration', () => {
    const scenario = generateScenario(42, 180_000);
    expect(scenario.users.map((user) => user.id)).to.deep.equal(['quiet', 'steady', 'bursty', 'hammer']);
    const times = scenario.events.map((event) => event.atMs);
    expect(times).to.deep.equal([...times].sort((x, y) => x - y));
    for (const event of scenario.events) {
      expect(Number.isInteger(event.atMs)).to.equal(true);
      expect(event.atMs).to.be.within(0, 179_999);
    }
    for (const user of scenario.users) {
      const mine = scenario.events.filter((event) => event.user === user.id).map((event) => event.atMs);
      expect(mine.length, user.id).to.be.greaterThan(0);
      expect(new Set(mine).size, `${user.id} reuses a millisecond`).to.equal(mine.length);
    }
  });
});
