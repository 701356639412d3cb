// One rule per namespace on one Redis client, in this process. Limiters that
// share a namespace and a client share their keys: they count each other's
// actions, which is how several parts of an app share one limit, and is only
// right when they also share the rule. With another rule, each judges and
// trims the others' records by its own, and together they admit more than
// either rule allows; so the second rule is refused when it is made. So is a
// second horizon: a limiter keeps records for its `timeout` (2 s at least)
// past the window, and one with a shorter horizon would let a key expire that
// the other's call in flight must count.

import { LEAST_IN_FLIGHT_MS } from '../core/decision-model.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';

/** What must be the same in every limiter of one namespace on one client. */
export interface NamespaceRule {
  /** The window, in milliseconds. */
  readonly interval: number;
  /** The limit: of actions, or of cost when `countsCost`. */
  readonly maxInInterval: number;
  /** Whether the limit is of cost (`maxCostInInterval`) rather than of actions. */
  readonly countsCost: boolean;
  /** The least gap, in milliseconds. */
  readonly minDifference: number;
  readonly countBlocked: boolean;
  /** The longest a call may be in flight, in milliseconds: records are kept this long past the window, 2 s at least. */
  readonly timeout: number;
}

/** The fields of a {@link NamespaceRule}, in the order messages list them. */
const RULE_FIELDS = ['interval', 'maxInInterval', 'countsCost', 'minDifference', 'countBlocked'] as const;

/**
 * The rule of each namespace, per client object: weak, so that a client the
 * app drops takes its namespaces with it. A namespace keeps the rule it was
 * first claimed with for as long as its client lives: whether an earlier
 * limiter is still reachable is not asked, so the answer never depends on
 * when the garbage collector runs.
 */
const rulesByClient = new WeakMap<object, Map<string, NamespaceRule>>();

/** A rule as messages show it: `{ interval: 60000, maxInInterval: 1, minDifference: 0, countBlocked: true }` (or `maxCostInInterval`). */
function describeRule(rule: NamespaceRule): string {
  const fields = RULE_FIELDS.filter((field) => field !== 'countsCost').map((field) =>
    field === 'maxInInterval' && rule.countsCost ? `maxCostInInterval: ${rule.maxInInterval}` : `${field}: ${String(rule[field])}`,
  );
  return `{ ${[...fields, `timeout: ${rule.timeout}`].join(', ')} }`;
}

/** How long past the window a rule's records are kept, in milliseconds: its timeout, 2 s at least. */
function horizonOf(rule: NamespaceRule): number {
  return Math.max(rule.timeout, LEAST_IN_FLIGHT_MS);
}

/**
 * Claims `namespace` on `client` for `rule`: the first claim sets the rule,
 * a later claim with the same rule shares it, and a later claim with another
 * rule is refused. Nothing is claimed without a client (each in-memory
 * limiter has a store of its own, so its keys are its own).
 *
 * @throws {@link InvalidOptionTypeError} (a `TypeError`, option `namespace`) naming the namespace and both rules.
 */
export function claimNamespace(client: object | undefined, namespace: string, rule: NamespaceRule): void {
  if (client === undefined) return;
  let rules = rulesByClient.get(client);
  if (rules === undefined) rulesByClient.set(client, (rules = new Map<string, NamespaceRule>()));
  const claimed = rules.get(namespace);
  if (claimed === undefined) {
    const { interval, maxInInterval, countsCost, minDifference, countBlocked, timeout } = rule;
    rules.set(namespace, Object.freeze({ interval, maxInInterval, countsCost, minDifference, countBlocked, timeout }));
    return;
  }
  if (RULE_FIELDS.every((field) => claimed[field] === rule[field]) && horizonOf(claimed) === horizonOf(rule)) return;
  throw new InvalidOptionTypeError(
    `Cannot make a limiter with the namespace \`${namespace}\` and the rule ${describeRule(rule)}: ` +
      `a limiter on the same client already uses that namespace with the rule ${describeRule(claimed)}. ` +
      'Limiters on one namespace and client share their keys and count each other’s actions, so they must share the rule too, ' +
      'and how long they keep records for calls in flight (a `timeout` above 2 s): ' +
      'give this rule its own namespace (e.g. a suffix naming the rule), or use the first limiter',
    'namespace',
    namespace,
  );
}
