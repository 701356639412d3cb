import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

// An LLM provider's limits, for every worker: 500 requests AND 30,000 tokens a minute.
const llm = new RateLimiterStack([
  new RollingRateLimiter({ client: redis, namespace: 'llm:rpm', interval: '1m', maxInInterval: 500, countBlocked: false }),
  new RollingRateLimiter({ client: redis, namespace: 'llm:tpm', interval: '1m', maxCostInInterval: 30_000, countBlocked: false }),
]);

async function complete(requestId: string, promptTokens: number, maxOutputTokens: number): Promise<string> {
  const reserved = promptTokens + maxOutputTokens; // the most the call can use
  const info = await llm.limitWithInfo('org-1', { actionId: requestId, cost: reserved });
  if (info.blocked) return `${reserved} tokens do not fit, retry in ${Math.ceil(info.millisecondsUntilAllowed / 1000)} s`;
  const used = promptTokens + 500; // what the provider's reply says: response.usage.total_tokens
  await llm.settle('org-1', requestId, used); // the rest is free again at once, for every worker
  return `reserved ${reserved}, used ${used}: ${reserved - used} given back`;
}

console.log(`req-1: ${await complete('req-1', 2_000, 10_000)}`);
console.log(`req-2: ${await complete('req-2', 2_000, 10_000)}`);
console.log(`req-3: ${await complete('req-3', 4_000, 24_000)}`);
await redis.quit();
