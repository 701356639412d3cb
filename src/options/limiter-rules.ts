// Rules read from configuration: a limiter's rule (its window, maximum, gap
// and whether refused attempts count) checked from untyped data, such as a
// gateway's per-route limits in a JSON or YAML file, with every error naming
// the rule's path in that file (`routes[2].limits[0].interval`).

import { boolean, describeValue, duration, integer, nonEmptyString, optional, MAX_INTEGER, MAX_MILLISECONDS, type Check } from '../core/check.js';
import { MAX_COST_BUDGET } from '../core/bounds.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { ownOptions } from './own-options.js';

/**
 * One limit read from configuration by {@link parseRule} or
 * {@link parseRules}: the rule of a {@link RollingRateLimiter}, checked,
 * with durations in milliseconds and the defaults filled in. Spread it into
 * the limiter's options beside what a file does not hold (the client, the
 * clock, the store policy): `new RollingRateLimiter({ client, ...rule, namespace })`.
 */
export interface LimiterRule {
  /** The rule's `namespace`, when the data gave one (a non-empty string); see the limiter's option. */
  readonly namespace?: string;
  /** The rolling window, in milliseconds (an integer from 1 to 10^12). */
  readonly interval: number;
  /** At most this many actions in any window (an integer from 1 to 2^31 - 1); absent on a budget of cost. */
  readonly maxInInterval?: number;
  /** At most this much cost in any window (an integer from 1 to 2^48): a budget of cost; absent on a limit of actions. */
  readonly maxCostInInterval?: number;
  /** At least this many milliseconds between two actions, at most `interval` (0 when the data left it out: no gap rule). */
  readonly minDifference: number;
  /** Whether refused attempts count too (`true` when the data left it out). */
  readonly countBlocked: boolean;
}

/** The keys a rule may have, in the order error messages list them, each with its check. */
const RULE_KEYS: Readonly<Record<keyof LimiterRule, Check<unknown>>> = {
  namespace: optional(nonEmptyString, undefined),
  interval: duration(1, MAX_MILLISECONDS),
  maxInInterval: optional(integer(1, MAX_INTEGER), undefined),
  maxCostInInterval: optional(integer(1, MAX_COST_BUDGET), undefined),
  minDifference: optional(duration(0, MAX_MILLISECONDS), 0),
  countBlocked: optional(boolean, true),
};

/**
 * Checks one rule read from untyped data (a parsed JSON or YAML document, or
 * part of one) and returns it with durations in milliseconds: an object with
 * `interval` (milliseconds or a {@link Duration} string such as `'30s'`),
 * `maxInInterval` or `maxCostInInterval` (exactly one), and optionally `minDifference`, `countBlocked` and
 * `namespace`. Nothing else: a misspelt key is an error, not a limit left
 * out. Only the object's own keys are read; the data is not touched.
 *
 * @example
 * ```ts
 * const rule = parseRule(config.routes[2].limits[0], 'routes[2].limits[0]');
 * // { interval: 60000, maxInInterval: 10, minDifference: 0, countBlocked: true }
 * const limiter = new RollingRateLimiter({ ...rule, namespace: 'search' });
 * ```
 *
 * @param data The rule, as read from the file.
 * @param path Where the rule is in the file, for error messages (`'routes[2].limits[0]'`).
 * @throws {@link InvalidOptionTypeError} (a `TypeError`) for something other than an object, an unknown key, a
 *   missing `interval` or `maxInInterval`, or a value of the wrong type (such as `'soon'` for a duration);
 *   the message and `option` name the path (`routes[2].limits[0].interval`).
 * @throws {@link InvalidOptionRangeError} (a `RangeError`) for a value out of range, or `minDifference` longer than `interval`.
 */
export function parseRule(data: unknown, path = 'rule'): LimiterRule {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InvalidOptionTypeError(
      `Expected \`${path}\` to be a limiter rule, an object with \`interval\` and \`maxInInterval\`, got ${Array.isArray(data) ? 'an array' : describeValue(data)}`,
      path,
      data,
    );
  }
  const given = ownOptions(data) as Readonly<Record<string, unknown>>;
  const keys = Object.keys(RULE_KEYS);
  for (const key of Object.getOwnPropertyNames(given)) {
    if (!keys.includes(key)) {
      throw new InvalidOptionTypeError(`Unknown key \`${path}.${key}\` in a limiter rule; its keys are ${keys.join(', ')}`, `${path}.${key}`, given[key]);
    }
  }
  const rule: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(RULE_KEYS)) {
    const value = check(given[key], `${path}.${key}`);
    if (value !== undefined) rule[key] = value;
  }
  const { interval, minDifference, maxInInterval, maxCostInInterval } = rule as unknown as LimiterRule;
  if ((maxInInterval === undefined) === (maxCostInInterval === undefined)) {
    throw new InvalidOptionTypeError(
      `Expected one of \`${path}.maxInInterval\` (a limit of actions) and \`${path}.maxCostInInterval\` (a budget of cost), got ${maxInInterval === undefined ? 'neither' : 'both'}`,
      `${path}.${maxInInterval === undefined ? 'maxInInterval' : 'maxCostInInterval'}`,
      maxInInterval === undefined ? undefined : maxCostInInterval,
    );
  }
  if (minDifference > interval) {
    throw new InvalidOptionRangeError(
      `Expected \`${path}.minDifference\` to be at most \`${path}.interval\` (${interval} ms), got ${describeValue(given.minDifference)}: ` +
        `a gap longer than the window cannot be kept; for one action per ${minDifference} ms give interval ${minDifference} and maxInInterval 1`,
      `${path}.minDifference`,
      given.minDifference,
    );
  }
  return rule as unknown as LimiterRule;
}

/**
 * Checks the limits of one thing (a route, a plan) read from untyped data: a
 * list of rules, the tiers of a {@link RateLimiterStack}, or one rule (an
 * object), read as a list of one. Each rule as {@link parseRule} checks it,
 * at `path[i]`; two rules of the list may not give the same `namespace`
 * (a stack's tiers need their own).
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs';
 *
 * // [{ "interval": "1s", "maxInInterval": 5 }, { "interval": "1m", "maxInInterval": 100 }] at routes[0].limits
 * const config = JSON.parse(readFileSync('rules.json', 'utf8')) as { routes: { limits: unknown }[] };
 * const tiers = parseRules(config.routes[0].limits, 'routes[0].limits'); // checked: each rule, or a TypeError naming its path
 * const stack = new RateLimiterStack(tiers.map((rule, i) => new RollingRateLimiter({ ...rule, namespace: `search:${i}` })));
 * ```
 *
 * @param data The rules (or the one rule), as read from the file.
 * @param path Where they are in the file, for error messages (`'routes[0].limits'`).
 * @returns The rules in their order, each checked; at least one.
 * @throws {@link InvalidOptionTypeError} (a `TypeError`) for an empty list, something that is neither a list nor an
 *   object, two rules with one namespace, or a rule {@link parseRule} refuses; each message names the path.
 * @throws {@link InvalidOptionRangeError} (a `RangeError`) for a rule with a value out of range.
 */
export function parseRules(data: unknown, path = 'rules'): LimiterRule[] {
  if (!Array.isArray(data)) {
    if (typeof data === 'object' && data !== null) return [parseRule(data, path)];
    throw new InvalidOptionTypeError(`Expected \`${path}\` to be a list of limiter rules, or one rule, got ${describeValue(data)}`, path, data);
  }
  if (data.length === 0) throw new InvalidOptionTypeError(`Expected \`${path}\` to hold at least one limiter rule, got an empty list`, path, data);
  // Array.from, not map(): map() skips the holes of a sparse array, which must be refused as rules.
  const rules = Array.from(data as readonly unknown[], (rule, i) => parseRule(rule, `${path}[${i}]`));
  rules.forEach(({ namespace }, i) => {
    const first = rules.findIndex((other) => other.namespace === namespace);
    if (namespace !== undefined && first < i) {
      throw new InvalidOptionTypeError(
        `\`${path}[${i}].namespace\` is \`${namespace}\`, as is \`${path}[${first}].namespace\`: give each tier its own namespace`,
        `${path}[${i}].namespace`,
        namespace,
      );
    }
  });
  return rules;
}
