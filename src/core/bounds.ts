// The bounds that keep every sum a store keeps exact (docs/semantics.md, "Bounds and shared namespaces"): a
// budget, and so every cost and settlement, is at most MAX_COST_BUDGET; settlements never make the records of one
// key weigh more than MAX_SETTLED_WEIGHT together, which leaves attempts room below 2^52 (the decide script's own
// limit), far below 2^53, where numbers stop counting by ones.

import { InvalidOptionRangeError } from '../errors/invalid-option-error.js';

/**
 * The largest budget of cost (`maxCostInInterval`) the library takes: 2^48, about 2.8 * 10^14. Every cost and every
 * settlement is at most its tier's budget.
 */
export const MAX_COST_BUDGET = 2 ** 48;

/**
 * The most a settlement may make the records of one key weigh together (2^51): one that would pass it is refused.
 * Attempts add at most a budget per window of records kept, so that a key stays below 2^52, where the decide script
 * refuses to record (its decision fails alone): out of reach but for budgets near 2^48 kept many windows in flight.
 */
export const MAX_SETTLED_WEIGHT = 2 ** 51;

/** The error of a settlement that would make the records of `keys` weigh more than {@link MAX_SETTLED_WEIGHT}. */
export function settlementTooHeavy(keys: readonly string[], actionId: string, cost: number): InvalidOptionRangeError {
  return new InvalidOptionRangeError(
    `Settling \`${actionId}\` to ${cost} would make the records of ${keys.join(', ')} weigh more than 2^51, ` +
      'more than their sums count exactly: nothing was settled',
    'cost',
    cost,
  );
}
