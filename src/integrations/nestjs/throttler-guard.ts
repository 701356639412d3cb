// RollingWindowThrottlerGuard: @nestjs/throttler's ThrottlerGuard, except that
// on a RollingWindowThrottlerStorage the named throttlers of a request are
// decided together, in one storage call. ThrottlerGuard's own loop still reads
// the throttlers (skips, per-route limits, trackers, keys); `handleRequest`
// only collects them, and the decision and the headers follow once it is done.
// @nestjs/throttler is loaded when installed (optional-throttler.cts): without
// it this module still loads, and only building the guard fails.

import { Inject, Injectable, Optional, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ThrottlerGuard as ThrottlerGuardClass, ThrottlerModuleOptions, ThrottlerRequest, ThrottlerStorage } from '@nestjs/throttler';
import { UnsupportedError } from '../../errors/unsupported-error.js';
import { loadThrottler } from './optional-throttler.cjs';
import { RollingWindowThrottlerStorage, type ThrottlerStorageRecord } from './throttler-storage.js';

const throttler = loadThrottler();

/** The base class without @nestjs/throttler: building it says what to install. */
class ThrottlerNotInstalled {
  constructor() {
    throw new UnsupportedError(
      "RollingWindowThrottlerGuard extends @nestjs/throttler's ThrottlerGuard, and @nestjs/throttler is not installed: " +
        'npm install @nestjs/throttler (RateLimit and RollingWindowGuard need only @nestjs/common and @nestjs/core)',
    );
  }
}

/** @nestjs/throttler's ThrottlerGuard when it is installed, else a stand-in whose constructor throws. */
const ThrottlerGuard = (throttler?.ThrottlerGuard ?? ThrottlerNotInstalled) as typeof ThrottlerGuardClass;

/** One throttler of a request, as ThrottlerGuard resolved it, with its tracker and key. */
interface Collected {
  readonly request: ThrottlerRequest;
  readonly tracker: string;
  readonly key: string;
}

/**
 * A drop-in for @nestjs/throttler's `ThrottlerGuard` that decides every named
 * throttler of a request together when the storage is a
 * {@link RollingWindowThrottlerStorage}: one storage call (one Redis round
 * trip, one script call), atomically. A request is admitted only when every
 * throttler admits it, and then counted by every one; a request refused by
 * one throttler is counted by none (ThrottlerGuard asks them one at a time,
 * so the throttlers before the refusing one have counted it), and each
 * throttler refusing it by its count starts its `blockDuration`.
 *
 * Everything else is ThrottlerGuard's: the throttlers and their order,
 * `@SkipThrottle()`, `skipIf`, `ignoreUserAgents`, `@Throttle()` and the
 * limit, ttl and blockDuration resolvers, `getTracker`, `generateKey`,
 * `setHeaders`, `errorMessage`, and the headers it sets: per throttler in
 * order, `X-RateLimit-Limit`, `-Remaining` and `-Reset` (suffixed by the
 * throttler's name but for `default`), up to the first refusing throttler,
 * which sets `Retry-After` and throws the `ThrottlerException`. The headers
 * of the throttlers before a refusal give their counts without the refused
 * request, which they did not count. Methods ThrottlerGuard lets a subclass
 * override are honoured. With any other storage it is ThrottlerGuard.
 *
 * Its keys are the storage's `incrementAll` keys (the tracker as the Redis
 * Cluster hash tag), not those ThrottlerGuard's `increment` uses: replacing
 * ThrottlerGuard by this guard starts every count afresh.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     ThrottlerModule.forRoot({
 *       throttlers: [{ name: 'second', ttl: 1_000, limit: 5 }, { name: 'minute', ttl: 60_000, limit: 100 }],
 *       storage: new RollingWindowThrottlerStorage({ client: redis, namespace: 'api' }),
 *     }),
 *   ],
 *   providers: [{ provide: APP_GUARD, useClass: RollingWindowThrottlerGuard }],
 * })
 * export class AppModule {}
 * ```
 */
export class RollingWindowThrottlerGuard extends ThrottlerGuard {
  /** The throttlers of the requests being read, per execution context (one per request). */
  readonly #collecting = new WeakMap<ExecutionContext, Collected[]>();

  /**
   * ThrottlerGuard's constructor, which Nest calls with ThrottlerModule's
   * options and storage. Its dependencies are declared by their tokens, so
   * that no emitted decorator metadata is needed (tsx and esbuild emit none),
   * and the `Reflector` is optional: when Nest cannot give one (it reads
   * metadata only, so any instance serves), the guard makes its own.
   * @throws {@link rolling-window-limiter!UnsupportedError | UnsupportedError} when @nestjs/throttler is not installed.
   */
  constructor(options: ThrottlerModuleOptions, storageService: ThrottlerStorage, reflector?: Reflector) {
    super(options, storageService, reflector ?? new Reflector());
  }

  /**
   * Decides one request, as Nest calls a guard: resolves `true` to let it
   * through (with the rate-limit headers set), rejects with a
   * `ThrottlerException` (a 429) when a throttler refuses it.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const storage = this.storageService;
    if (!(storage instanceof RollingWindowThrottlerStorage)) return super.canActivate(context);
    const collected: Collected[] = [];
    this.#collecting.set(context, collected);
    try {
      if (!(await super.canActivate(context))) return false;
    } finally {
      this.#collecting.delete(context);
    }
    if (collected.length === 0) return true;
    const records = await storage.incrementAll(
      collected.map(({ request, tracker, key }) => ({
        key,
        ttl: request.ttl,
        limit: request.limit,
        blockDuration: request.blockDuration,
        throttlerName: request.throttler.name as string,
        tracker,
      })),
    );
    const { res } = this.getRequestResponse(context);
    for (const [i, { request, tracker, key }] of collected.entries()) await this.#answer(res, request, tracker, key, records[i] as ThrottlerStorageRecord);
    return true;
  }

  /**
   * ThrottlerGuard's step for one throttler. While {@link canActivate} reads a
   * request's throttlers for a RollingWindowThrottlerStorage, it applies
   * `ignoreUserAgents`, resolves the tracker and the key, and keeps them for
   * the decision; otherwise it is ThrottlerGuard's.
   */
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const collected = this.#collecting.get(request.context);
    if (collected === undefined) return super.handleRequest(request);
    const { context, throttler } = request;
    const { req } = this.getRequestResponse(context);
    const userAgent = (req as { headers: Record<string, string> }).headers['user-agent'] as string;
    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    if (Array.isArray(ignoreUserAgents) && ignoreUserAgents.some((pattern) => pattern.test(userAgent))) return true;
    const tracker = await request.getTracker(req, context);
    collected.push({ request, tracker, key: request.generateKey(context, tracker, throttler.name as string) });
    return true;
  }

  /** What ThrottlerGuard does with one throttler's answer: its headers, and the exception when it refuses. */
  async #answer(
    res: Record<string, unknown>,
    { context, limit, ttl, throttler }: ThrottlerRequest,
    tracker: string,
    key: string,
    record: ThrottlerStorageRecord,
  ): Promise<void> {
    const suffix = throttler.name === 'default' ? '' : `-${throttler.name}`;
    const setHeaders = throttler.setHeaders ?? this.commonOptions.setHeaders ?? true;
    if (record.isBlocked) {
      if (setHeaders) this.setResponseHeader(res, `Retry-After${suffix}`, record.timeToBlockExpire);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    }
    if (setHeaders) {
      this.setResponseHeader(res, `${this.headerPrefix}-Limit${suffix}`, limit);
      this.setResponseHeader(res, `${this.headerPrefix}-Remaining${suffix}`, Math.max(0, limit - record.totalHits));
      this.setResponseHeader(res, `${this.headerPrefix}-Reset${suffix}`, record.timeToExpire);
    }
  }
}

Injectable()(RollingWindowThrottlerGuard);
if (throttler !== undefined) {
  Inject(throttler.getOptionsToken())(RollingWindowThrottlerGuard, undefined, 0);
  Inject(throttler.getStorageToken())(RollingWindowThrottlerGuard, undefined, 1);
  Inject(Reflector)(RollingWindowThrottlerGuard, undefined, 2);
  Optional()(RollingWindowThrottlerGuard, undefined, 2);
}
