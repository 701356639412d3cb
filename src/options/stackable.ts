// Whether limiters can be stacked: decided together, atomically, in one step.

import type { MicrosecondClock } from '../core/clock.js';
import type { TierSpec } from '../core/tiered-core.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import { RedisStore } from '../redis/redis-store.js';

/**
 * Throws when the tiers cannot be decided together in one atomic step: a
 * `TypeError` naming `limiters[i]` for two tiers with one namespace in one
 * keyspace, tiers kept in different places, or different clocks; an
 * `UnsupportedError` for a tier that decides with plain commands.
 */
export function checkStackable(tiers: readonly TierSpec[], clocks: readonly ('local' | 'redis' | MicrosecondClock)[]): void {
  const first = tiers[0] as TierSpec;
  tiers.forEach((tier, i) => {
    // Two tiers clash when their keys are one: the same namespace in one keyspace (in-memory limiters each have their own).
    const clash = tiers.findIndex((other) => other.namespace === tier.namespace && other.store.sharesKeysWith(tier.store));
    if (clash < i) {
      throw new InvalidOptionTypeError(
        `Cannot stack two limiters with the namespace \`${tier.namespace}\` (limiters[${i}]): give each tier its own namespace`,
        'limiters',
        tier.namespace,
      );
    }
    if (!first.store.canDecideWith(tier.store)) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] with limiters[0]: stacked limiters must keep their state in the same place ` +
          '(all in memory, or all on the same Redis client) so that one atomic step decides every tier',
        'limiters',
        tier.namespace,
      );
    }
    if (tier.store instanceof RedisStore && tier.store.path === 'multi') {
      throw new UnsupportedError(
        tier.store.adapter.supportsScripts
          ? `Cannot stack limiters[${i}]: a stack decides every tier with the Lua script, and it has \`useScript: false\``
          : `Cannot stack limiters[${i}]: a stack must decide every tier before it writes, which on Redis takes a Lua script, and ${tier.store.name} cannot run scripts`,
      );
    }
    if (clocks[i] !== clocks[0]) {
      throw new InvalidOptionTypeError(`Cannot stack limiters[${i}] with limiters[0]: stacked limiters must use the same \`clock\``, 'limiters', clocks[i]);
    }
  });
}
