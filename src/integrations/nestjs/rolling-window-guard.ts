// RollingWindowGuard: a Nest guard that decides the requests of every handler
// with a @RateLimit rule, with one RollingRateLimiter per handler (built at
// its first request, then kept), on Express and on Fastify alike.

import { HttpException, HttpStatus, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { describeValue } from '../../core/check.js';
import type { LimiterId } from '../../core/identity.js';
import type { RateLimitInfo } from '../../core/rate-limit-info.js';
import { retryAfterSeconds } from '../../http/header-values.js';
import { headersForPolicies, type RateLimitHeadersFor } from '../../http/headers.js';
import { policiesOf } from '../../http/policies.js';
import { RollingRateLimiter } from '../../limiters/rolling-rate-limiter.js';
import {
  createDefaultKey,
  normalizeGuardOptions,
  type NormalizedGuardOptions,
  type RateLimitKeyFunction,
  type RollingWindowGuardOptions,
} from './guard-options.js';
import { RATE_LIMIT_METADATA, type NormalizedRateLimitRule } from './rate-limit-decorator.js';

/** The body of a refused request (the Express middleware's default body). */
export interface RateLimitedResponseBody {
  /** Always `'rate_limited'`: tells a refused request from other errors. */
  readonly error: 'rate_limited';
  /** The same number as the `Retry-After` header. */
  readonly retryAfterSeconds: number;
}

/** What decides one handler's requests: its limiter, and the headers of its decisions. */
interface Decider {
  readonly limiter: RollingRateLimiter;
  readonly headersFor: RateLimitHeadersFor;
}

/** A response of either platform: Fastify's reply has `header`, Express's response both. */
interface HeaderTarget {
  header?(name: string, value: string): unknown;
  setHeader?(name: string, value: string): unknown;
}

/**
 * A Nest guard (`CanActivate`) that limits every route handler with a
 * {@link RateLimit} rule, per client: by default the signed-in user
 * (`request.user.id`), else the client IP (see
 * {@link RollingWindowGuardOptions.key}). Each handler gets its own
 * {@link rolling-window-limiter!RollingRateLimiter | RollingRateLimiter},
 * built at its first request and kept, so the decision is the library's own:
 * an exact rolling window, the least gap between requests, one Redis round
 * trip, shared by every process on the same Redis.
 *
 * - Admitted: the request goes on, with the `RateLimit-Policy` and
 *   `RateLimit` headers of the Express middleware (see `headers`).
 * - Refused: a 429 with `Retry-After` in whole seconds (rounded up), the same
 *   headers, and the body `{ "error": "rate_limited", "retryAfterSeconds": n }`
 *   (thrown as an `HttpException`, so exception filters see it).
 * - Handlers without a rule, and contexts other than HTTP, pass untouched.
 * - A store failure follows `onStoreError`; with `'throw'` the guard rejects
 *   with the `StoreError`, which Nest answers with a 500.
 *
 * Works on `@nestjs/platform-express` and `@nestjs/platform-fastify`. Give it
 * options by instance: `@UseGuards(new RollingWindowGuard({ client, namespace }))`,
 * or app-wide with `{ provide: APP_GUARD, useValue: new RollingWindowGuard({ ... }) }`
 * (`useClass` builds it with the defaults: in memory).
 *
 * @example
 * ```ts
 * @Controller('posts')
 * @UseGuards(new RollingWindowGuard({ client: redis, namespace: 'posts' }))
 * export class PostsController {
 *   @RateLimit({ interval: '1m', maxInInterval: 5, minDifference: '3s' })
 *   @Post()
 *   create(): string {
 *     return 'posted';
 *   }
 * }
 * ```
 */
export class RollingWindowGuard implements CanActivate {
  readonly #options: NormalizedGuardOptions;
  readonly #key: RateLimitKeyFunction;
  readonly #reflector = new Reflector();
  /**
   * The deciders, per limit name (by default one per handler, `Controller.handler`) and rule (the object
   * `@RateLimit` left): handlers that share a name share a limiter, in memory as on Redis.
   */
  readonly #deciders = new Map<string, Map<NormalizedRateLimitRule, Decider>>();

  /**
   * @param options See {@link RollingWindowGuardOptions}.
   * @throws TypeError when an option has the wrong type or is unknown; RangeError when one is out of range.
   */
  constructor(options: RollingWindowGuardOptions = {}) {
    this.#options = normalizeGuardOptions(options);
    this.#key = this.#options.key ?? createDefaultKey(this.#options.ipv6Subnet);
  }

  /**
   * Decides one request, as Nest calls a guard: resolves `true` to let it
   * through (with the rate-limit headers set), rejects with a 429
   * `HttpException` when it is refused.
   * @throws HttpException (a rejection) with status 429 when the request is refused.
   * @throws TypeError (a rejection) when the request has no key.
   * @throws StoreError or TimeoutError (a rejection) when the store fails and `onStoreError` is `'throw'`.
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const handler = context.getHandler();
    const controller = context.getClass();
    const rule = this.#reflector.getAllAndOverride<NormalizedRateLimitRule | undefined>(RATE_LIMIT_METADATA, [handler, controller]);
    if (rule === undefined) return true;
    const { limiter, headersFor } = this.#deciderFor(rule.name ?? `${controller.name}.${handler.name}`, rule);
    const http = context.switchToHttp();
    const request: unknown = http.getRequest();
    const id: LimiterId | null | undefined = await this.#key(request, context);
    if (id === undefined || id === null || id === '') {
      throw new TypeError(`RollingWindowGuard found no key for ${controller.name}.${handler.name}: the key function returned ${describeValue(id)}`);
    }
    const info = await limiter.limitWithInfo(id);
    const response = http.getResponse<HeaderTarget>();
    for (const [name, value] of Object.entries(headersFor(info))) setHeader(response, name, value);
    if (!info.blocked) return true;
    throw new HttpException(refusedBody(info), HttpStatus.TOO_MANY_REQUESTS);
  }

  /** The decider of one limit name and rule, built once. */
  #deciderFor(name: string, rule: NormalizedRateLimitRule): Decider {
    let byRule = this.#deciders.get(name);
    if (byRule === undefined) this.#deciders.set(name, (byRule = new Map<NormalizedRateLimitRule, Decider>()));
    let decider = byRule.get(rule);
    if (decider === undefined) {
      const { client, namespace: prefix, clock, onStoreError, headers } = this.#options;
      const limiter = new RollingRateLimiter({
        ...(client === undefined ? {} : { client }),
        namespace: `${prefix}:${name}`,
        interval: rule.interval,
        maxInInterval: rule.maxInInterval,
        minDifference: rule.minDifference,
        countBlocked: rule.countBlocked,
        clock,
        onStoreError,
      });
      decider = { limiter, headersFor: headersForPolicies(policiesOf(limiter), { headers, policyName: () => name }) };
      byRule.set(rule, decider);
    }
    return decider;
  }
}

/** The body of a 429. */
function refusedBody(info: RateLimitInfo): RateLimitedResponseBody {
  return { error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) };
}

/** Sets a header on Fastify's reply (`header`) or Express's response (`setHeader`). */
function setHeader(response: HeaderTarget, name: string, value: string): void {
  if (typeof response.header === 'function') response.header(name, value);
  else response.setHeader?.(name, value);
}
