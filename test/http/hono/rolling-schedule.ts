// The schedule both two-process Hono tests (Node and Bun) replay: 3 per 4 s,
// as [ms after T0, which process (0 or 1), expected status]. The first
// admission leaves the window at exactly 4 s, the next two at 6 s.
export const THREE_PER_FOUR_SECONDS: readonly (readonly [atMs: number, process: 0 | 1, status: number])[] = [
  [0, 0, 200],
  [2_000, 1, 200],
  [2_000, 0, 200],
  [3_999.999, 1, 429], // 1 µs before the first leaves
  [4_000, 0, 200],
  [4_000, 1, 429], // a fixed window would have started afresh at 4 s and let this through
  [6_000, 1, 200],
  [6_000, 0, 200],
  [6_000, 1, 429],
];
