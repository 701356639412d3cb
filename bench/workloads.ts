// The workloads every contender runs: which rules, which ids, how many calls
// in flight. The same workload is given to every contender of a scenario.

import type { Rules } from './contenders/types.js';
import type { IdSource } from './measure.js';

/** 100,000 ids visited in a scrambled but fixed order (7919 is coprime with 100,000). */
export const MANY_IDS: IdSource = Array.from({ length: 100_000 }, (_, i) => `user${(i * 7919) % 100_000}`);
export const HOT_ID: IdSource = ['hot-user'];

/** 10 per minute: the README's push-notification rule, without the gap. */
export const REDIS_RULES: Rules = { interval: 60_000, maxInInterval: 10, minDifference: 0 };
/** The in-memory comparison's rule: 100 per minute. */
export const MEMORY_RULES: Rules = { interval: 60_000, maxInInterval: 100, minDifference: 0 };

export interface ThroughputScenario {
  /** e.g. `redis-many-c64`. */
  readonly id: string;
  readonly label: string;
  readonly kind: 'redis' | 'memory';
  readonly rules: Rules;
  readonly ids: IdSource;
  readonly concurrency: number;
}

function scenario(kind: 'redis' | 'memory', shape: 'many' | 'hot', concurrency: number): ThroughputScenario {
  const rules = kind === 'redis' ? REDIS_RULES : MEMORY_RULES;
  const what = shape === 'many' ? '100k ids, mostly allowed' : 'one hot id, mostly blocked';
  return {
    id: `${kind}-${shape}-c${concurrency}`,
    label: `${kind === 'redis' ? 'Redis' : 'in-memory'}: ${what}, max ${rules.maxInInterval}/min, concurrency ${concurrency}`,
    kind,
    rules,
    ids: shape === 'many' ? MANY_IDS : HOT_ID,
    concurrency,
  };
}

export const THROUGHPUT_SCENARIOS: readonly ThroughputScenario[] = [
  scenario('redis', 'many', 1),
  scenario('redis', 'many', 64),
  scenario('redis', 'hot', 1),
  scenario('redis', 'hot', 64),
  scenario('memory', 'many', 1),
  scenario('memory', 'hot', 1),
];

/** maxInInterval values of the bytes-per-decision measurement. */
export const BYTES_MAXIMA: readonly number[] = [10, 100, 1_000, 10_000];
/** A window long enough that nothing leaves it during the bytes measurement. */
export const BYTES_INTERVAL_MS = 3_600_000;

/** Attempts of the flood in the memory-per-key measurement. */
export const FLOOD_ATTEMPTS = 20_000;
