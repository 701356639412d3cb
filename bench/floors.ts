// The sliding-log floor: the least Lua any rolling-window limiter runs per
// decision, to set the decide script's cost inside Redis against. It counts
// only allowed attempts, has no gap rule, and answers one integer per
// decision; sent one decision per call, or batched the way `batch: true`
// batches (the decisions of one turn of the event loop in one call, two calls
// out at once).

import { createHash } from 'node:crypto';

/**
 * KEYS: one key per decision. ARGV[1] max, ARGV[2] TTL in ms, then per
 * decision: the cutoff (now - interval, µs), now (µs) and the member, as
 * strings. Answers the count before the attempt (allowed when below max),
 * one integer for one decision, or one per decision.
 */
export const SLIDING_LOG_LUA = `local max, ttl = tonumber(ARGV[1]), ARGV[2]
local reply = {}
for i, key in ipairs(KEYS) do
  local a = 3 * i
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[a])
  local count = redis.call('ZCARD', key)
  if count < max then
    redis.call('ZADD', key, ARGV[a + 1], ARGV[a + 2])
    redis.call('PEXPIRE', key, ttl)
  end
  reply[i] = count
end
if #KEYS == 1 then return reply[1] end
return reply
`;

export const SLIDING_LOG_SHA1 = createHash('sha1').update(SLIDING_LOG_LUA).digest('hex');

/** One decision of the floor: its key, the window's cutoff, now and the member. */
export interface LogAttempt {
  readonly key: string;
  readonly cutoff: string;
  readonly now: string;
  readonly member: string;
}

/** The KEYS and ARGV of one call of the floor over `attempts`. */
export function slidingLogCall(attempts: readonly LogAttempt[], max: number, ttlMs: number): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args = [String(max), String(ttlMs)];
  for (const { key, cutoff, now, member } of attempts) {
    keys.push(key);
    args.push(cutoff, now, member);
  }
  return { keys, args };
}

/**
 * Gathers the calls of one turn of the event loop and sends them together,
 * keeping at most two batches out (the batches wait for one to come back), as
 * the library's `batch: true` does; `send` answers one value per item.
 */
export function microBatcher<Item, Answer>(send: (items: Item[]) => Promise<Answer[]>, maxBatch = 256): (item: Item) => Promise<Answer> {
  const waiting: { item: Item; resolve: (answer: Answer) => void; reject: (error: unknown) => void }[] = [];
  let out = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    while (waiting.length > 0 && out < 2) {
      const size = out === 0 && waiting.length > 1 ? Math.ceil(waiting.length / 2) : waiting.length;
      const batch = waiting.splice(0, Math.min(size, maxBatch));
      out += 1;
      send(batch.map((w) => w.item))
        .then(
          (answers) => batch.forEach((w, i) => w.resolve(answers[i] as Answer)),
          (error: unknown) => batch.forEach((w) => w.reject(error)),
        )
        .finally(() => {
          out -= 1;
          flush();
        });
    }
  };
  return (item) =>
    new Promise((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!scheduled && out < 2) {
        scheduled = true;
        queueMicrotask(flush);
      }
    });
}
