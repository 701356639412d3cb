// The push-notification scenario of the demo: a few users who behave
// differently, as a time-ordered list of notification attempts on simulated
// time. Everything comes from a small seeded PRNG, so one seed always gives
// the same events (no Math.random, no wall clock).

/** A user of the scenario: the id the limiter sees, and a short description of how they behave. */
export interface ScenarioUser {
  readonly id: string;
  readonly behaviour: string;
}

/** One notification someone wants to send, `atMs` milliseconds after the start. */
export interface ScenarioEvent {
  readonly atMs: number;
  readonly user: string;
}

export interface Scenario {
  readonly seed: number;
  readonly durationMs: number;
  readonly users: readonly ScenarioUser[];
  /** Every user's attempts, merged in time order (ties: in the order of `users`). */
  readonly events: readonly ScenarioEvent[];
}

/** The demo's seed; any integer gives a plausible run. */
export const DEFAULT_SEED = 2026;

/** Three simulated minutes. */
export const DEFAULT_DURATION_MS = 180_000;

/** mulberry32: a tiny, fast, well-mixed 32-bit PRNG. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

/** An integer number of milliseconds, uniform in [min, max]. */
function between(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** A few notifications, tens of seconds apart: never near a limit. */
function quiet(random: Random, durationMs: number): number[] {
  const times: number[] = [];
  for (let t = between(random, 4_000, 20_000); t < durationMs; t += between(random, 25_000, 45_000)) times.push(t);
  return times;
}

/** One every ~5 s (12 a minute): two more than the window allows. */
function steady(random: Random, durationMs: number): number[] {
  const times: number[] = [];
  for (let t = between(random, 0, 2_000); t < durationMs; t += between(random, 4_500, 5_500)) times.push(t);
  return times;
}

/** Now and then a message, and two chat storms of 12 to 18 notifications within about 2 s. */
function bursty(random: Random, durationMs: number): number[] {
  const times: number[] = [];
  for (let t = between(random, 2_000, 8_000); t < durationMs; t += between(random, 12_000, 25_000)) times.push(t);
  for (const stormAt of [between(random, 18_000, 24_000), between(random, 105_000, 115_000)]) {
    const size = between(random, 12, 18);
    for (let i = 0; i < size; i += 1) times.push(stormAt + between(random, 0, 2_000));
  }
  return times;
}

/** Every 500 ms for the first 90 s, then it backs off to one every ~10 s. */
function hammer(random: Random, durationMs: number): number[] {
  const times: number[] = [];
  let t = between(random, 0, 499);
  for (; t < Math.min(90_000, durationMs); t += 500) times.push(t);
  for (t += 9_500; t < durationMs; t += between(random, 9_500, 10_500)) times.push(t);
  return times;
}

const PROFILES: readonly (ScenarioUser & { readonly generate: (random: Random, durationMs: number) => number[] })[] = [
  { id: 'quiet', behaviour: 'a few, far apart', generate: quiet },
  { id: 'steady', behaviour: 'one every ~5 s', generate: steady },
  { id: 'bursty', behaviour: 'chat storms', generate: bursty },
  { id: 'hammer', behaviour: 'every 0.5 s, then 10 s', generate: hammer },
];

/**
 * Generates the scenario for `seed`: each user's attempts (whole milliseconds,
 * strictly increasing per user, within [0, durationMs)), merged in time order.
 */
export function generateScenario(seed: number = DEFAULT_SEED, durationMs: number = DEFAULT_DURATION_MS): Scenario {
  const random = mulberry32(seed);
  const events: (ScenarioEvent & { readonly order: number })[] = [];
  PROFILES.forEach((profile, order) => {
    const times = profile.generate(random, durationMs).sort((a, b) => a - b);
    let previous = -1;
    for (const time of times) {
      const atMs = Math.max(time, previous + 1); // two attempts of one user never share a millisecond
      if (atMs >= durationMs) break;
      events.push({ atMs, user: profile.id, order });
      previous = atMs;
    }
  });
  events.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
  return {
    seed,
    durationMs,
    users: PROFILES.map(({ id, behaviour }) => ({ id, behaviour })),
    events: events.map(({ atMs, user }) => ({ atMs, user })),
  };
}
