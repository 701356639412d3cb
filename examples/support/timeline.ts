// Text rendering of the demo, as pure functions: limiter decisions in, lines
// of text out (no I/O, no clock). A timeline picture with one row per user,
// its legend, the blocked streaks, and a summary table. ANSI colors only when
// asked for, so the output can be tested and piped.

/** One attempt and what the limiter said about it (the fields of `RateLimitInfo` the demo shows). */
export interface Attempt {
  readonly user: string;
  /** Milliseconds since the start of the scenario. */
  readonly atMs: number;
  readonly blocked: boolean;
  readonly blockedDueToCount: boolean;
  readonly blockedDueToMinDifference: boolean;
  readonly millisecondsUntilAllowed: number;
}

export interface TimelineOptions {
  /** One row per entry, top to bottom: the user id and the label printed before the row. */
  readonly rows: readonly { readonly id: string; readonly label: string }[];
  readonly durationMs: number;
  /** Time covered by one column. */
  readonly bucketMs: number;
  /** A tick and a label on the time axis at every multiple of this. */
  readonly labelEveryMs: number;
  readonly color: boolean;
}

/** What a column shows: the most telling thing that happened in it. */
export type Cell = 'sent' | 'both' | 'count' | 'gap' | 'none';

export const GLYPHS: Readonly<Record<Cell, string>> = { sent: '█', both: '▒', count: 'x', gap: '-', none: '·' };

const MEANINGS: Readonly<Record<Cell, string>> = {
  sent: 'sent',
  both: 'sent and blocked',
  count: 'blocked, window full (count)',
  gap: 'blocked, too soon (gap only)',
  none: 'no attempt',
};

const COLORS: Readonly<Record<Cell, string>> = { sent: '32', both: '33', count: '31', gap: '35', none: '2' };

/** The widest line any function here returns. */
export const MAX_LINE_WIDTH = 120;

/** Wraps `text` in an SGR color sequence when `color` is on. */
export function paint(text: string, sgr: string, color: boolean): string {
  return color ? `\u001b[${sgr}m${text}\u001b[0m` : text;
}

/** `m:ss`, or `m:ss.t` with tenths. */
export function formatTime(ms: number, tenths = false): string {
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  const tail = tenths ? `.${Math.floor((ms % 1000) / 100)}` : '';
  return `${minutes}:${String(seconds).padStart(2, '0')}${tail}`;
}

/** The cells of one user's row: one per `bucketMs` from 0 to `durationMs`; attempts outside are ignored. */
export function rowCells(attempts: readonly Attempt[], user: string, durationMs: number, bucketMs: number): Cell[] {
  const columns = Math.ceil(durationMs / bucketMs);
  const sent = new Array<boolean>(columns).fill(false);
  const count = new Array<boolean>(columns).fill(false);
  const gap = new Array<boolean>(columns).fill(false);
  for (const attempt of attempts) {
    if (attempt.user !== user || attempt.atMs < 0 || attempt.atMs >= durationMs) continue;
    const column = Math.floor(attempt.atMs / bucketMs);
    if (!attempt.blocked) sent[column] = true;
    else if (attempt.blockedDueToCount) count[column] = true;
    else gap[column] = true;
  }
  return sent.map((wasSent, i): Cell => {
    const wasBlocked = count[i] === true || gap[i] === true;
    if (wasSent) return wasBlocked ? 'both' : 'sent';
    return count[i] === true ? 'count' : gap[i] === true ? 'gap' : 'none';
  });
}

/** The glyphs of `cells`, with one color sequence per run of equal cells. */
function paintRuns(cells: readonly Cell[], color: boolean): string {
  let text = '';
  let start = 0;
  cells.forEach((cell, i) => {
    if (cells[i + 1] === cell) return;
    text += paint(GLYPHS[cell].repeat(i + 1 - start), COLORS[cell], color);
    start = i + 1;
  });
  return text;
}

/** The picture: one row per user, then the time axis with a tick and a label every `labelEveryMs`. */
export function renderTimeline(attempts: readonly Attempt[], options: TimelineOptions): string[] {
  const { rows, durationMs, bucketMs, labelEveryMs, color } = options;
  const width = Math.max(...rows.map((row) => row.label.length), 0);
  const indent = ' '.repeat(width + 4);
  const lines = rows.map((row) => {
    const cells = rowCells(attempts, row.id, durationMs, bucketMs);
    return `  ${row.label.padEnd(width)}  ${paintRuns(cells, color)}`;
  });
  const columns = Math.ceil(durationMs / bucketMs);
  const isTick = (column: number): boolean => (column * bucketMs) % labelEveryMs === 0;
  let axis = '';
  let labels = '';
  for (let column = 0; column <= columns; column += 1) {
    const tick = isTick(column);
    axis += column === 0 ? '└' : column === columns ? '┘' : tick ? '┴' : '─';
    // A label that would touch the one before it is left out; its tick stays.
    if (tick && (column === 0 || labels.length < column)) {
      labels = labels.padEnd(column) + formatTime(column * bucketMs);
    }
  }
  lines.push(indent + paint(axis, '2', color), indent + labels);
  return lines;
}

/** The legend of the picture, wrapped to `MAX_LINE_WIDTH`. */
export function renderLegend(bucketMs: number, color: boolean): string[] {
  const cells = Object.keys(GLYPHS) as Cell[];
  const items = cells.map((cell) => `${paint(GLYPHS[cell], COLORS[cell], color)} ${MEANINGS[cell]}`);
  items.push(`(one column = ${bucketMs / 1000} s)`);
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    const longer = line === '' ? `  ${item}` : `${line}   ${item}`;
    if (line !== '' && stripAnsi(longer).length > MAX_LINE_WIDTH) {
      lines.push(line);
      line = `  ${item}`;
    } else {
      line = longer;
    }
  }
  return [...lines, line];
}

/**
 * Each run of consecutive blocked attempts of a user, in time order: when it
 * started and ended, how many attempts each rule blocked, when the limiter
 * told the last of them to retry, and when (if ever) the user got a
 * notification through again.
 */
export function renderBlockedStreaks(attempts: readonly Attempt[], users: readonly string[], color: boolean): string[] {
  const width = Math.max(...users.map((user) => user.length), 0);
  const streaks: { at: number; line: string }[] = [];
  for (const user of users) {
    let run: Attempt[] = [];
    const close = (next: Attempt | undefined): void => {
      const first = run[0];
      const last = run[run.length - 1];
      if (first === undefined || last === undefined) return;
      const byCount = run.filter((attempt) => attempt.blockedDueToCount).length;
      const byGap = run.filter((attempt) => attempt.blockedDueToMinDifference).length;
      const from = formatTime(first.atMs, true);
      const span = (first === last ? from : `${from}–${formatTime(last.atMs, true)}`).padEnd(15);
      const outcome = next === undefined ? 'never sent again' : `sent again at ${formatTime(next.atMs, true)}`;
      const retryAt = Math.ceil((last.atMs + last.millisecondsUntilAllowed) / 100) * 100; // rounded up: never early
      const retry = formatTime(retryAt, true);
      const what = `${run.length} blocked (by count ${byCount}, by gap ${byGap}), retry at ${retry}; `;
      streaks.push({ at: first.atMs, line: `  ${span} ${user.padEnd(width)}  ${what}${paint(outcome, '1', color)}` });
      run = [];
    };
    for (const attempt of attempts) {
      if (attempt.user !== user) continue;
      if (attempt.blocked) run.push(attempt);
      else close(attempt);
    }
    close(undefined);
  }
  return streaks.sort((a, b) => a.at - b.at).map((streak) => streak.line);
}

/** The table: attempts, sent, blocked by each rule (an attempt can count for both) and the longest wait reported. */
export function renderSummary(attempts: readonly Attempt[], users: readonly { readonly id: string; readonly behaviour: string }[], color: boolean): string[] {
  const header = ['user', 'behaviour', 'attempts', 'sent', 'blocked by count', 'blocked by gap', 'longest wait'];
  const body = users.map((user) => {
    const mine = attempts.filter((attempt) => attempt.user === user.id);
    const longest = Math.max(0, ...mine.map((attempt) => attempt.millisecondsUntilAllowed));
    return [
      user.id,
      user.behaviour,
      String(mine.length),
      String(mine.filter((attempt) => !attempt.blocked).length),
      String(mine.filter((attempt) => attempt.blockedDueToCount).length),
      String(mine.filter((attempt) => attempt.blockedDueToMinDifference).length),
      `${(longest / 1000).toFixed(1)} s`,
    ];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...body.map((row) => row[i]?.length ?? 0)));
  const format = (row: readonly string[]): string =>
    '  ' + row.map((value, i) => (i < 2 ? value.padEnd(widths[i] ?? 0) : value.padStart(widths[i] ?? 0))).join('  ');
  return [
    paint(format(header), '1', color),
    ...body.map(format),
    '',
    '  longest wait: the longest millisecondsUntilAllowed the limiter answered the user: how long it was told to wait',
    '  before an attempt would be allowed (after a send, the gap; in a full window, until the oldest attempt counted',
    '  leaves it, which blocked attempts that keep coming push further away)',
  ];
}

/** Removes SGR color sequences (to measure what a terminal shows). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
