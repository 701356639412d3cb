import { Redis } from 'ioredis';
import { RollingRateLimiter } from '/work/main/dist/esm/index.js';
const url = process.argv[2];
const client = new Redis(url);
const C = Number(process.argv[3] ?? 64);
const MS = 2000;
async function run(name, fn) {
  let n = 0; const end = performance.now() + MS; const lat = [];
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async (_, w) => {
    let i = 0;
    while (performance.now() < end) { const t = performance.now(); await fn(`id-${w}-${i++ % 100}`); lat.push(performance.now() - t); n++; }
  }));
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  console.log(name.padEnd(28), String(Math.round(n / (MS / 1000))).padStart(8), '/s', 'p50', lat[Math.floor(lat.length * 0.5)].toFixed(2), 'p99', lat[Math.floor(lat.length * 0.99)].toFixed(2), 'cpu µs/dec', ((cpu.user + cpu.system) / n).toFixed(1));
  return n;
}
const mk = (o) => new RollingRateLimiter({ client, namespace: 'qb' + Math.random(), interval: 60000, maxInInterval: 1000000, ...o });
const multi = mk({});
const script = mk({ useScript: true });
const cbf = mk({ countBlocked: false });
const batched = mk({ batch: true });
const batchedCbf = mk({ batch: true, countBlocked: false });
for (let r = 0; r < 2; r++) {
  await run('ping', () => client.ping());
  await run('multi', (id) => multi.limit(id));
  await run('script (useScript)', (id) => script.limit(id));
  await run('script countBlocked false', (id) => cbf.limit(id));
  await run('batch', (id) => batched.limit(id));
  await run('batch countBlocked false', (id) => batchedCbf.limit(id));
}
await client.quit();
