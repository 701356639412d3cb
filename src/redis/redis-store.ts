import { UnsupportedError } from '../errors/unsupported-error.js';
import type { RedisAdapter } from './adapters/adapter.js';
import type { ConnectionProblem } from '../errors/timeout-error.js';
import { attemptWithMulti, peekWithMulti } from './decide/multi-path.js';
import { decideWithScript } from './decide/script-path.js';
import { batcherFor } from './decide/decision-batcher.js';
import { clearWithMulti, clearWithScript, undoWithMulti, undoWithScript } from './clear-and-undo.js';
import { checkServerOnce } from './server-checks.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';

/**
 * How a Redis store decides, fixed when it is assembled (options/assemble.ts
 * is the one place that chooses):
 *
 * - `'script'`: every attempt and dry run is one EVALSHA of the decide script
 *   (a dry run in its dry-run mode), `clear` and `undo` one EVALSHA each of
 *   their own scripts;
 * - `'batch'`: attempts and dry runs go in the next batch of decide script
 *   calls of the client; `clear` and `undo` as on `'script'`;
 * - `'multi'`: one MULTI of plain commands (`useScript: false`, or a client
 *   without scripts such as redis-mock), for one limiter that counts blocked
 *   attempts, on the caller's clock, without action ids; a dry run is a
 *   read-only MULTI, `clear` and `undo` a MULTI each.
 *
 * The scripts also run where a MULTI cannot: on a server at its `maxmemory`
 * under `noeviction`, Redis refuses whatever is queued in a MULTI, but runs
 * these scripts whose writes only free memory (a dry run writes nothing), so
 * `clear`, `undo` and dry runs still work there (attempts, which must add,
 * fail on every path).
 */
export type RedisPath = 'script' | 'batch' | 'multi';

/** What a store does for each of its operations, on one {@link RedisPath}. */
interface Way {
  attempt(redis: RedisAdapter, tiers: readonly Tier[], now: number | undefined, actionId: string | undefined): Promise<StoreDecision>;
  peek(redis: RedisAdapter, tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision>;
  clear(redis: RedisAdapter, keys: readonly string[]): Promise<void>;
  undo(redis: RedisAdapter, keys: readonly string[], actionId: string): Promise<boolean>;
}

/** Each path's way, chosen once per store. */
const WAYS: Readonly<Record<RedisPath, Way>> = {
  script: {
    attempt: (redis, tiers, now, actionId) => decideWithScript(redis, { tiers, now, dryRun: false, actionId }),
    peek: (redis, tiers, now) => decideWithScript(redis, { tiers, now, dryRun: true }),
    clear: clearWithScript,
    undo: undoWithScript,
  },
  batch: {
    attempt: (redis, tiers, now, actionId) => batcherFor(redis).decide({ tiers, now, dryRun: false, actionId }),
    peek: (redis, tiers, now) => batcherFor(redis).decide({ tiers, now, dryRun: true }),
    clear: clearWithScript,
    undo: undoWithScript,
  },
  multi: {
    attempt: async (redis, tiers, now, actionId) => {
      if (actionId !== undefined) {
        // Action ids come with each call, so this is the one refusal that cannot be made when the limiter is built.
        throw new UnsupportedError(
          `Action ids need the decide script, and this limiter decides with plain commands (${redis.supportsScripts ? '`useScript: false`' : `${redis.kind} cannot run scripts`})`,
        );
      }
      // The MULTI path serves one tier on the caller's clock (the Redis clock needs the script).
      return attemptWithMulti(redis, tiers[0] as Tier, now as number);
    },
    peek: (redis, tiers, now) => peekWithMulti(redis, tiers, now as number),
    clear: clearWithMulti,
    undo: undoWithMulti,
  },
};

/**
 * The Redis store: one client, one way to decide. The first call on a client
 * also checks, on the side, that its server does not evict keys
 * (server-checks.ts).
 */
export class RedisStore implements Store {
  /** The adapter of the store's client. */
  readonly adapter: RedisAdapter;
  /** The way this store decides. */
  readonly path: RedisPath;
  readonly #way: Way;

  constructor(adapter: RedisAdapter, path: RedisPath) {
    this.adapter = adapter;
    this.path = path;
    this.#way = WAYS[path];
  }

  /** A store on the same client that decides another way (a stack's own, for example with `batch: true`). */
  withPath(path: RedisPath): RedisStore {
    return path === this.path ? this : new RedisStore(this.adapter, path);
  }

  get name(): string {
    return this.adapter.kind;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    return this.#checked(this.#way.attempt(this.adapter, tiers, now, actionId));
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    return this.#checked(this.#way.peek(this.adapter, tiers, now));
  }

  async clear(keys: readonly string[]): Promise<void> {
    return this.#checked(this.#way.clear(this.adapter, keys));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    return this.#checked(this.#way.undo(this.adapter, keys, actionId));
  }

  connectionProblem(): ConnectionProblem | undefined {
    return this.adapter.connectionProblem?.();
  }

  sharesKeysWith(other: Store): boolean {
    return other instanceof RedisStore && other.adapter.client === this.adapter.client;
  }

  canDecideWith(other: Store): boolean {
    return this.sharesKeysWith(other);
  }

  slotOwner(key: string): string | undefined {
    return this.adapter.slotOwner?.(key);
  }

  /** The call, sent; and beside it, on the client's first call only, the check of its server. */
  #checked<T>(call: Promise<T>): Promise<T> {
    void checkServerOnce(this.adapter);
    return call;
  }
}
