// The HTTP side of a decision, free of any framework: the rate-limit response
// headers (draft-ietf-httpapi-ratelimit-headers-10/-11 structured fields, and
// optionally the legacy X-RateLimit-* set) and `Retry-After`. The Express
// middleware uses this module; Fastify hooks and plain `node:http` servers can
// use it directly. The tiers it describes are in policies.ts, the values it
// writes in header-values.ts.

import { describeValue, func, normalize, oneOf, optional, type Normalized } from '../core/check.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { retryAfterSeconds, toStructuredString } from './header-values.js';
import { policiesOf, tierStatuses, type HttpRateLimiter, type InfoOf, type RateLimitPolicy } from './policies.js';

/**
 * Which rate-limit headers go on every response:
 *
 * - `'draft'` (default): `RateLimit-Policy` and `RateLimit`, the structured
 *   fields of the IETF draft "RateLimit header fields for HTTP"
 *   (draft-ietf-httpapi-ratelimit-headers-10 and -11, which share the syntax);
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`;
 * - `'both'`: both sets;
 * - `false`: none.
 *
 * A blocked response carries `Retry-After` whatever this says.
 */
export type RateLimitHeaderStyle = 'draft' | 'legacy' | 'both' | false;

/** Options of {@link createRateLimitHeaders}. */
export interface RateLimitHeaderOptions {
  /** Which headers to produce; see {@link RateLimitHeaderStyle}. @default 'draft' */
  readonly headers?: RateLimitHeaderStyle;
  /**
   * The public name of a tier in `RateLimit-Policy` and `RateLimit`. Default:
   * the limiter's `namespace`. Namespaces are key prefixes, chosen for Redis;
   * give clients stable, short names here when they differ
   * (`({ index }) => ['per-second', 'per-minute'][index]`). Names must be
   * distinct. Characters outside printable ASCII are percent-encoded
   * (UTF-8), since a structured-field string cannot carry them.
   */
  readonly policyName?: (policy: RateLimitPolicy) => string;
}

/** Turns a decision into response headers; made by {@link createRateLimitHeaders}. */
export type RateLimitHeadersFor<Info extends RateLimitInfo = RateLimitInfo> = (info: Info) => Record<string, string>;

/** The defaults of {@link RateLimitHeaderOptions}. */
export const HEADER_DEFAULTS = Object.freeze({ headers: 'draft' } as const);

/** The checks of {@link RateLimitHeaderOptions}, which the middleware's options include. */
export const HEADER_SCHEMA = {
  headers: optional(oneOf<RateLimitHeaderStyle>(['draft', 'legacy', 'both', false]), HEADER_DEFAULTS.headers),
  policyName: optional(func<(policy: RateLimitPolicy) => string>(), undefined),
};

/** {@link RateLimitHeaderOptions} once checked, with the default filled in. */
export type NormalizedHeaderOptions = Normalized<typeof HEADER_SCHEMA>;

/**
 * Builds, once per limiter, the function that turns each decision into
 * response headers. For every decision:
 *
 * - `RateLimit-Policy`: one item per tier, `"<name>";q=<quota>;w=<interval in s, rounded up>`
 *   (e.g. `"push-minute";q=10;w=60, "push-3s";q=1;w=3`), where the quota is the
 *   tier's `maxInInterval`, or its `maxCostInInterval` on a tier that counts cost;
 * - `RateLimit`: the binding tier (see {@link tierStatuses}), `"<name>";r=<remaining>;t=<seconds>`
 *   (e.g. `"push-3s";r=0;t=3`), where `t` is left out while the next attempt
 *   would be allowed now (a rolling window has no reset moment to announce),
 *   and `r` is in the tier's units: actions, or on a tier that counts cost its
 *   `costRemaining` (`"tokens";r=5900`);
 * - with `headers: 'legacy' | 'both'`: `X-RateLimit-Limit` (the quota), `X-RateLimit-Remaining`,
 *   `X-RateLimit-Reset` (seconds, not a timestamp; 0 when allowed now) of the binding tier;
 * - when blocked: `Retry-After`, the stack's wait in whole seconds, rounded up.
 *
 * @example
 * ```ts
 * const headersFor = createRateLimitHeaders(api);
 * const info = await api.limitWithInfo(userId);
 * for (const [name, value] of Object.entries(headersFor(info))) response.setHeader(name, value);
 * ```
 *
 * @throws TypeError when the limiter or an option is of the wrong type, an option is unknown, or two tiers get the
 * same policy name.
 * @throws RangeError when `headers` is a string other than `'draft'`, `'legacy'` and `'both'`.
 */
export function createRateLimitHeaders<Limiter extends HttpRateLimiter>(
  limiter: Limiter,
  options: RateLimitHeaderOptions = {},
): RateLimitHeadersFor<InfoOf<Limiter>> {
  return headersForPolicies(policiesOf(limiter), normalize(options, HEADER_SCHEMA, 'the header options', { allowMissing: true }));
}

/** The policy name of each tier, serialized, checked to be strings and distinct. */
function policyNames(policies: readonly RateLimitPolicy[], policyName: NormalizedHeaderOptions['policyName']): Map<number, string> {
  const names = new Map<number, string>();
  const seen = new Set<string>();
  for (const policy of policies) {
    const name = policyName === undefined ? policy.namespace : policyName(policy);
    if (typeof name !== 'string') {
      throw new InvalidOptionTypeError(`Expected \`policyName\` to return a string, got ${describeValue(name)}`, 'policyName', name);
    }
    const serialized = toStructuredString(name);
    if (seen.has(serialized)) {
      throw new InvalidOptionTypeError(`Two tiers have the policy name ${serialized}: give each tier its own name`, 'policyName', name);
    }
    seen.add(serialized);
    names.set(policy.index, serialized);
  }
  return names;
}

/**
 * The headers function of {@link createRateLimitHeaders} for checked options
 * (the middleware checks them with its own): `policies` from `policiesOf`.
 */
export function headersForPolicies<Info extends RateLimitInfo>(
  policies: readonly RateLimitPolicy[],
  { headers: style, policyName }: NormalizedHeaderOptions,
): RateLimitHeadersFor<Info> {
  const names = policyNames(policies, policyName);
  const nameOf = (policy: RateLimitPolicy): string => names.get(policy.index) ?? toStructuredString(policy.namespace);
  const policyHeader = policies.map((policy) => `${nameOf(policy)};q=${policy.quota};w=${retryAfterSeconds(policy.interval)}`).join(', ');
  const draft = style === 'draft' || style === 'both';
  const legacy = style === 'legacy' || style === 'both';

  return (info) => {
    const headers: Record<string, string> = {};
    if (draft || legacy) {
      const { binding } = tierStatuses(policies, info);
      if (draft) {
        headers['RateLimit-Policy'] = policyHeader;
        const reset = binding.resetSeconds > 0 ? `;t=${binding.resetSeconds}` : '';
        headers.RateLimit = `${nameOf(binding.policy)};r=${binding.remaining}${reset}`;
      }
      if (legacy) {
        headers['X-RateLimit-Limit'] = String(binding.policy.quota);
        headers['X-RateLimit-Remaining'] = String(binding.remaining);
        headers['X-RateLimit-Reset'] = String(binding.resetSeconds);
      }
    }
    if (info.blocked) headers['Retry-After'] = String(retryAfterSeconds(info.millisecondsUntilAllowed));
    return headers;
  };
}
