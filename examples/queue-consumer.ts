// Queue consumers sharing one API quota: 6 workers upload 60 products for a
// seller through an API that allows 20 uploads per 2 seconds. Each worker
// waits until the limiter admits its next upload; the work all gets done,
// never faster than the limit. (The same code, with 16 workers and 100 per
// minute, is the seller's 500 uploads.) In memory by default; set REDIS_URL
// to share the quota through Redis, as separate processes would.
//
// The window check at the end reads each upload's admission time as the
// limiter saw it (the clock reading of its admitted attempt), not the moment
// its worker resumed: a busy machine may resume a worker late, and a late
// wake-up would make the uploads look bunched.
//
//   npx tsx examples/queue-consumer.ts

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../src/index.js';

const WORKERS = 6;
const PRODUCTS = 60;
const RULES = { interval: 2_000, maxInInterval: 20 } as const;

async function main(): Promise<void> {
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  const namespace = `example:uploads:${randomBytes(4).toString('hex')}`;
  // The limiter's clock (microseconds since the epoch), noting the last reading made for each product: with
  // countBlocked: false every turn of waitUntilAllowed is an attempt, so the last one is the admitted one.
  const uploading = new AsyncLocalStorage<string>();
  const admittedAtUs = new Map<string, number>();
  const clock = (): number => {
    const nowUs = Math.floor((performance.timeOrigin + performance.now()) * 1000);
    const product = uploading.getStore();
    if (product !== undefined) admittedAtUs.set(product, nowUs);
    return nowUs;
  };
  // countBlocked: false, so that a worker's blocked attempts never count against the quota.
  const limiter = new RollingRateLimiter({ ...RULES, namespace, countBlocked: false, clock, ...(redis ? { client: redis } : {}) });
  const queue = Array.from({ length: PRODUCTS }, (_, i) => `product-${i + 1}`);
  const started = performance.now();
  const startedUs = clock();
  const uploadedAt: number[] = [];

  const worker = async (name: string): Promise<void> => {
    for (let product = queue.shift(); product !== undefined; product = queue.shift()) {
      await uploading.run(product, () => limiter.waitUntilAllowed('seller-42', { maxWait: '30s', actionId: product }));
      uploadedAt.push(((admittedAtUs.get(product) ?? NaN) - startedUs) / 1000);
      if (uploadedAt.length % 10 === 0)
        console.log(`${String(Math.round(uploadedAt.at(-1) ?? 0)).padStart(5)} ms  ${uploadedAt.length} uploaded (last by ${name})`);
    }
  };
  try {
    await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(`worker-${i + 1}`)));
    const busiest = Math.max(...uploadedAt.map((at) => uploadedAt.filter((other) => other > at - RULES.interval && other <= at).length));
    console.log(`${PRODUCTS} uploads by ${WORKERS} workers in ${Math.round(performance.now() - started)} ms;`);
    console.log(`at most ${busiest} in any ${RULES.interval} ms window (the limit is ${RULES.maxInInterval}).`);
  } finally {
    await limiter.clear('seller-42');
    await redis?.quit();
  }
}

await main();
