import type { StoreDecision, Tier } from '../core/store.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import { clearWithMulti, undoWithMulti } from './clear-and-undo.js';
import { attemptWithMulti, peekWithMulti } from './decide/multi-path.js';
import { RedisStore } from './redis-store.js';

/**
 * The Redis store that decides with plain commands, one MULTI per operation (`useScript: false`, or a client without
 * scripts such as redis-mock): for one limiter that counts blocked attempts, on the caller's clock, without action
 * ids (options/assemble.ts refuses the rest when the limiter is built). A dry run is a read-only MULTI.
 */
export class MultiStore extends RedisStore {
  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    if (actionId !== undefined) {
      // Action ids come with each call, so this is the one refusal that cannot be made when the limiter is built.
      const why = this.adapter.supportsScripts ? '`useScript: false`' : `${this.adapter.kind} cannot run scripts`;
      throw new UnsupportedError(`Action ids need the decide script, and this limiter decides with plain commands (${why})`);
    }
    return this.checked(attemptWithMulti(this.adapter, tiers[0] as Tier, now as number));
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    return this.checked(peekWithMulti(this.adapter, tiers, now as number));
  }

  async settle(): Promise<boolean> {
    // Never reached: a limiter that counts cost is refused this store when it is built (options/assemble.ts).
    throw new UnsupportedError('Costs need the decide script, and this limiter decides with plain commands');
  }

  async clear(keys: readonly string[]): Promise<void> {
    return this.checked(clearWithMulti(this.adapter, keys));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    return this.checked(undoWithMulti(this.adapter, keys, actionId));
  }
}
