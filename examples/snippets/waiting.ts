import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
interface Job {
  id: string;
  sellerId: string;
}
async function* jobs(): AsyncGenerator<Job> {
  for (let n = 1; n <= 3; n++) yield { id: `job-${n}`, sellerId: 'seller-9' };
}
const queue = jobs();
const signal = AbortSignal.timeout(60_000); // e.g. the worker's shutdown signal
async function uploadProduct(job: Job): Promise<void> {
  console.log(`uploaded ${job.id}`);
}

// docs:begin
// 16 workers sharing an API's 100 uploads per minute per seller
const uploads = new RollingRateLimiter({ client: redis, namespace: 'uploads', interval: 60_000, maxInInterval: 100, countBlocked: false });

for await (const job of queue) {
  await uploads.waitUntilAllowed(job.sellerId, { maxWait: '10m', signal, actionId: job.id });
  await uploadProduct(job);
}
// docs:end
await redis.quit();
