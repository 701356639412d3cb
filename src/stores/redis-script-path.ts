// The script path: one EVALSHA per decision, for what must be decided before
// it is written (countBlocked: false, stacked tiers, the Redis clock).

import { decideTiers, type WindowSample } from '../decision.js';
import { StoreError } from '../errors/store-error.js';
import { nextMember } from '../member.js';
import type { RedisAdapter } from '../redis/adapter.js';
import { readInteger } from '../redis/replies.js';
import { runScript } from '../redis/run-script.js';
import { DECIDE_SCRIPT } from '../redis/scripts/decide-script.js';
import type { StoreDecision, Tier } from './store.js';

const VALUES_PER_TIER = 4;

/**
 * Decides (and, unless `dryRun`, records) an attempt across tiers with the
 * decide script, then derives each tier's outcome from the samples it returns
 * with the same code every store uses, and checks that both reached the same
 * decision.
 */
export async function decideWithScript(
  redis: RedisAdapter,
  tiers: readonly Tier[],
  now: number | undefined,
  dryRun: boolean,
): Promise<StoreDecision> {
  const args: (string | number)[] = [now === undefined ? '' : now, dryRun ? '' : nextMember(), dryRun ? '0' : '1'];
  for (const { rule } of tiers) {
    args.push(rule.intervalUs, rule.maxInInterval, rule.minDifferenceUs, rule.countBlocked ? '1' : '0');
  }
  const reply = await runScript(
    redis,
    DECIDE_SCRIPT,
    tiers.map((tier) => tier.key),
    args,
  );
  if (!Array.isArray(reply) || reply.length !== 2 + VALUES_PER_TIER * tiers.length) {
    throw new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
  }
  const values = reply.map((value) => readInteger(value, `the ${DECIDE_SCRIPT.name} script`));
  const decidedAt = values[0] as number;
  const samples = tiers.map((_, i): WindowSample => {
    const [count, newest, kMinus1th, kth] = values.slice(2 + VALUES_PER_TIER * i, 2 + VALUES_PER_TIER * (i + 1)) as [
      number,
      number,
      number,
      number,
    ];
    return { count, newest: orUndefined(newest), kMinus1thNewest: orUndefined(kMinus1th), kthNewest: orUndefined(kth) };
  });
  const decision = decideTiers(
    tiers.map((tier) => tier.rule),
    decidedAt,
    samples,
  );
  if (decision.allowed !== (values[1] === 1)) {
    throw new StoreError(
      `The ${DECIDE_SCRIPT.name} script and the decision model disagree (script: ${values[1] === 1 ? 'allowed' : 'blocked'}); please report this`,
    );
  }
  return { now: decidedAt, tiers: decision.tiers };
}

function orUndefined(value: number): number | undefined {
  return value < 0 ? undefined : value;
}
