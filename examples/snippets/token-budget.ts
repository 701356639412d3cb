import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

// An LLM provider's limits, shared by every worker: 500 requests AND 30,000 tokens a minute,
// decided together in one round trip. A refused call does not count (countBlocked: false).
const llm = new RateLimiterStack([
  new RollingRateLimiter({ client: redis, namespace: 'llm:rpm', interval: '1m', maxInInterval: 500, countBlocked: false }),
  new RollingRateLimiter({ client: redis, namespace: 'llm:tpm', interval: '1m', maxCostInInterval: 30_000, countBlocked: false }),
]);

async function complete(requestId: string, promptTokens: number, maxOutputTokens: number): Promise<void> {
  // Reserve the most the call can use: its prompt and the longest answer it allows.
  const reserved = promptTokens + maxOutputTokens;
  const info = await llm.limitWithInfo('org-1', { actionId: requestId, cost: reserved });
  if (info.blocked) {
    console.log(`${requestId}: ${reserved} tokens do not fit, retry in ${Math.ceil(info.millisecondsUntilAllowed / 1000)} s`);
    return;
  }
  console.log(`${requestId}: reserved ${reserved}, ${info.costRemaining} tokens left`);
  const used = promptTokens + 500; // the provider's reply says what it used: response.usage.total_tokens
  // Settle to what it used: the rest of the reservation is free again at once, for every worker.
  await llm.settle('org-1', requestId, used);
  console.log(`${requestId}: used ${used}, ${reserved - used} given back`);
}

await complete('req-1', 2_000, 10_000);
await complete('req-2', 2_000, 10_000);
await complete('req-3', 4_000, 24_000);
await redis.quit();
