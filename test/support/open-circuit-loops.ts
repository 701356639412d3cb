// A worker whose only work is loops that await `limitWithInfo()` and nothing
// else, as test/redis/failures/circuit-breaker-yields.test.ts runs it:
// `node --import tsx open-circuit-loops.ts <url> <policy> <loops>`.
// Every 250 ms a timer prints one JSON line: the 50 ms ticks counted so far
// and the calls Redis decided so far. It prints `ready` once the loops run,
// and stops its loops, closes its client and returns when it reads a line on
// stdin. While a circuit that settles calls in a microtask is open, none of
// that happens: no timer fires and stdin is never read.

import { Redis } from 'ioredis';
import { RollingRateLimiter, type RateLimiterError } from '../../src/index.js';

const [url = '', policy = 'block', loopCount = '2'] = process.argv.slice(2);
const client = new Redis(url);
client.on('error', () => {}); // the test freezes Redis
const limiter = new RollingRateLimiter({
  client,
  namespace: `test:open-circuit-loops:${process.pid}`,
  interval: 60_000,
  maxInInterval: 1_000_000_000,
  timeout: 200,
  onStoreError: policy === 'throw' ? 'throw' : 'block',
});

let stop = false;
let ticks = 0;
let byRedis = 0;
const startedAt = performance.now();

async function loop(index: number): Promise<void> {
  for (let i = 0; !stop && i < 100_000_000; i++) {
    try {
      const info = await limiter.limitWithInfo(`id-${index}`);
      if (info.storeFailure === undefined) byRedis += 1;
    } catch (error) {
      if ((error as RateLimiterError).code === undefined) throw error;
    }
  }
}

await limiter.limit('warm-up');
const ticker = setInterval(() => (ticks += 1), 50);
const reporter = setInterval(() => console.log(JSON.stringify({ ms: Math.round(performance.now() - startedAt), ticks, byRedis })), 250);
process.stdin.once('data', () => {
  stop = true;
});
const loops = Array.from({ length: Number(loopCount) }, (_, i) => loop(i));
console.log('ready');
await Promise.all(loops);
clearInterval(ticker);
clearInterval(reporter);
process.stdin.destroy();
client.disconnect();
console.log('stopped');
