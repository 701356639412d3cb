// The HTTP side of a decision, free of any framework: the rate-limit response
// headers (draft-ietf-httpapi-ratelimit-headers-10/-11 structured fields, and
// optionally the legacy X-RateLimit-* set) and `Retry-After`. The Express
// middleware uses this module; Fastify hooks and plain `node:http` servers can
// use it directly.

import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { RateLimiterStack, StackRateLimitInfo } from '../limiters/rate-limiter-stack.js';
import type { RollingRateLimiter } from '../limiters/rolling-rate-limiter.js';
import { describeValue } from '../core/check.js';

/** What the middleware limits with: one limiter, or a stack of tiers decided together. */
export type HttpRateLimiter = RollingRateLimiter | RateLimiterStack;

/** The info a limiter's `limitWithInfo` resolves with: a {@link StackRateLimitInfo} for a stack. */
export type InfoOf<Limiter extends HttpRateLimiter> = Limiter extends RateLimiterStack ? StackRateLimitInfo : RateLimitInfo;

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

/** One tier as the headers describe it: a quota policy of the draft. */
export interface RateLimitPolicy {
  /** The tier's position in the stack (0 for a single limiter). */
  readonly index: number;
  /** The limiter's namespace (its key prefix), the default policy name. */
  readonly namespace: string;
  /** The window, in milliseconds (advertised as `w`, in seconds rounded up). */
  readonly interval: number;
  /** The most actions per window (advertised as `q`). */
  readonly maxInInterval: number;
  /** The least gap between actions, in milliseconds (0: none). Not advertised: it shows as `r=0;t=...` while it holds. */
  readonly minDifference: number;
}

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

/** The numbers the headers report for one tier. */
export interface TierStatus {
  /** Which tier (its position; 0 for a single limiter). */
  readonly index: number;
  /** The tier's quota policy. */
  readonly policy: RateLimitPolicy;
  /** Available quota (the draft's `r`): the tier's `actionsRemaining`, but 0 while the next attempt has to wait. */
  readonly remaining: number;
  /** Seconds until an attempt would be allowed by this tier, rounded up (the draft's `t`); 0 when it would be allowed now. */
  readonly resetSeconds: number;
}

/** Turns a decision into response headers; made by {@link createRateLimitHeaders}. */
export type RateLimitHeadersFor<Info extends RateLimitInfo = RateLimitInfo> = (info: Info) => Record<string, string>;

const HEADER_STYLES: readonly unknown[] = ['draft', 'legacy', 'both', false];

/**
 * Whole seconds to wait, rounded up, for `Retry-After` and the draft's `t`: 0
 * only when there is nothing to wait for (1 ms is 1 s, 1001 ms is 2 s).
 */
export function retryAfterSeconds(milliseconds: number): number {
  if (!(milliseconds > 0)) return 0; // also NaN
  if (!Number.isFinite(milliseconds)) return Number.MAX_SAFE_INTEGER;
  return Math.max(1, Math.ceil(milliseconds / 1000));
}

/**
 * Serializes a policy name as a structured-field String (RFC 9651 section
 * 4.1.6): printable ASCII, with `"` and `\` escaped; anything else (control
 * characters, non-ASCII) is percent-encoded as UTF-8 first, since a String
 * cannot carry it.
 */
export function toStructuredString(name: string): string {
  let body = '';
  for (const char of name) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === '\\') body += `\\${char}`;
    else if (code >= 0x20 && code <= 0x7e) body += char;
    else body += percentEncode(char);
  }
  return `"${body}"`;
}

function percentEncode(char: string): string {
  let encoded = '';
  // A lone surrogate encodes as U+FFFD, which is still unambiguous text.
  for (const byte of new TextEncoder().encode(char)) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return encoded;
}

/** True when `limiter` is a stack (it has `limiters`), judged by shape so that another copy of the library works too. */
function isStack(limiter: HttpRateLimiter): limiter is RateLimiterStack {
  return Array.isArray((limiter as Partial<RateLimiterStack>).limiters);
}

/**
 * The quota policies of a limiter or stack, one per tier, in order.
 *
 * @throws TypeError when `limiter` is neither a RollingRateLimiter nor a RateLimiterStack.
 */
export function policiesOf(limiter: HttpRateLimiter): RateLimitPolicy[] {
  if (typeof limiter !== 'object' || limiter === null || typeof (limiter as Partial<RollingRateLimiter>).limitWithInfo !== 'function') {
    throw new InvalidOptionTypeError(
      `Expected \`limiter\` to be a RollingRateLimiter or a RateLimiterStack, got ${describeValue(limiter)}`,
      'limiter',
      limiter,
    );
  }
  const tiers: readonly RollingRateLimiter[] = isStack(limiter) ? limiter.limiters : [limiter];
  return tiers.map((tier, index) => {
    const { namespace, interval, maxInInterval, minDifference } = tier;
    if (typeof namespace !== 'string' || typeof interval !== 'number' || typeof maxInInterval !== 'number') {
      throw new InvalidOptionTypeError(
        `Expected \`limiter\` to be a RollingRateLimiter or a RateLimiterStack (tier ${index} has no namespace, interval and maxInInterval)`,
        'limiter',
        limiter,
      );
    }
    return { index, namespace, interval, maxInInterval, minDifference: typeof minDifference === 'number' ? minDifference : 0 };
  });
}

/** The tiers' own infos: `tiers` of a stack's info, or the info itself for a single limiter. */
function tierInfos(info: RateLimitInfo): readonly RateLimitInfo[] {
  const tiers: unknown = (info as Partial<StackRateLimitInfo>).tiers;
  return Array.isArray(tiers) && tiers.length > 0 ? (tiers as readonly RateLimitInfo[]) : [info];
}

/**
 * Each tier's numbers as the headers report them, and the binding tier: the
 * one with the longest wait (when the request is blocked, that is the tier
 * whose wait `Retry-After` reports), or when no tier makes the next attempt
 * wait, the one with the fewest actions remaining; ties go to the tier
 * stacked first.
 */
export function tierStatuses(
  policies: readonly RateLimitPolicy[],
  info: RateLimitInfo,
): {
  /** Each tier's numbers, in stack order. */
  tiers: TierStatus[];
  /** The tier the `RateLimit` and `X-RateLimit-*` headers report. */
  binding: TierStatus;
} {
  const tiers = tierInfos(info).map((tier, index): TierStatus => {
    const resetSeconds = retryAfterSeconds(tier.millisecondsUntilAllowed);
    const policy = policies[index] ?? fallbackPolicy(index, tier);
    return { index, policy, remaining: resetSeconds > 0 ? 0 : Math.max(0, tier.actionsRemaining), resetSeconds };
  });
  let binding = tiers[0] as TierStatus;
  for (const tier of tiers) {
    if (tier.resetSeconds > binding.resetSeconds || (tier.resetSeconds === binding.resetSeconds && tier.remaining < binding.remaining)) {
      binding = tier;
    }
  }
  return { tiers, binding };
}

/** A tier the limiter did not announce (a fallback stack with more tiers): described by its own info. */
function fallbackPolicy(index: number, tier: RateLimitInfo): RateLimitPolicy {
  const described = tier as Partial<RateLimitPolicy>;
  return {
    index,
    namespace: typeof described.namespace === 'string' ? described.namespace : `tier-${index}`,
    interval: typeof described.interval === 'number' ? described.interval : 0,
    maxInInterval: typeof described.maxInInterval === 'number' ? described.maxInInterval : 0,
    minDifference: 0,
  };
}

/**
 * Builds, once per limiter, the function that turns each decision into
 * response headers. For every decision:
 *
 * - `RateLimit-Policy`: one item per tier, `"<name>";q=<maxInInterval>;w=<interval in s, rounded up>`
 *   (e.g. `"push-minute";q=10;w=60, "push-3s";q=1;w=3`);
 * - `RateLimit`: the binding tier (see {@link tierStatuses}), `"<name>";r=<remaining>;t=<seconds>`
 *   (e.g. `"push-3s";r=0;t=3`), where `t` is left out while the next attempt
 *   would be allowed now (a rolling window has no reset moment to announce);
 * - with `headers: 'legacy' | 'both'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
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
 * @throws TypeError when an option is of the wrong type, or two tiers get the same policy name.
 * @throws RangeError when `headers` is not one of its values.
 */
export function createRateLimitHeaders<Limiter extends HttpRateLimiter>(
  limiter: Limiter,
  options: RateLimitHeaderOptions = {},
): RateLimitHeadersFor<InfoOf<Limiter>> {
  const style = options.headers ?? 'draft';
  if (!HEADER_STYLES.includes(style)) {
    throw new InvalidOptionRangeError(
      `Expected \`headers\` to be 'draft', 'legacy', 'both' or false, got ${describeValue(style)}`,
      'headers',
      style,
    );
  }
  const { policyName } = options;
  if (policyName !== undefined && typeof policyName !== 'function') {
    throw new InvalidOptionTypeError(`Expected \`policyName\` to be a function, got ${describeValue(policyName)}`, 'policyName', policyName);
  }
  const policies = policiesOf(limiter);
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
  const nameOf = (policy: RateLimitPolicy): string => names.get(policy.index) ?? toStructuredString(policy.namespace);
  const policyHeader = policies.map((policy) => `${nameOf(policy)};q=${policy.maxInInterval};w=${retryAfterSeconds(policy.interval)}`).join(', ');
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
        headers['X-RateLimit-Limit'] = String(binding.policy.maxInInterval);
        headers['X-RateLimit-Remaining'] = String(binding.remaining);
        headers['X-RateLimit-Reset'] = String(binding.resetSeconds);
      }
    }
    if (info.blocked) headers['Retry-After'] = String(retryAfterSeconds(info.millisecondsUntilAllowed));
    return headers;
  };
}
