import { RollingRateLimiter } from 'rolling-window-limiter';

// 1,000 units a second, in memory (give it a `client` and a `namespace` to share it through Redis).
const budget = new RollingRateLimiter({ interval: '1s', maxCostInInterval: 1_000, countBlocked: false });

async function run(job: string, cost: number): Promise<void> {
  const started = Date.now();
  // Resolves once `cost` fits in the window: it sleeps the reported wait in between.
  await budget.waitUntilAllowed('batch-export', { cost, actionId: job, maxWait: '10s' });
  console.log(`${job}: ${cost} admitted ${Date.now() - started >= 500 ? 'once the window drained' : 'at once'}`);
}

await run('job-1', 600);
await run('job-2', 300);
await run('job-3', 600); // 900 are in the window: waits until job-1 leaves it

// Or limit a function, each call weighing what its arguments say:
const exportRows = budget.wrap(async (rows: number) => `exported ${rows} rows`, { id: () => 'batch-export', cost: (rows) => rows });
console.log(await exportRows(100));
