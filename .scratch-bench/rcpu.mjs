import { Redis } from 'ioredis';
import { RollingRateLimiter } from '/work/main/dist/esm/index.js';
const client = new Redis(process.argv[2]);
const C = Number(process.argv[3] ?? 64), N = 60000;
async function measure(name, options) {
  const limiter = new RollingRateLimiter({ client, namespace: 'rc' + Math.random(), interval: 60000, maxInInterval: 10, ...options });
  await client.config('RESETSTAT');
  const cpuOf = async () => { const i = await client.info('cpu'); return (+i.match(/used_cpu_sys:([\d.]+)/)[1] + +i.match(/used_cpu_user:([\d.]+)/)[1]) * 1e6; };
  const rc0 = await cpuOf();
  let n = 0; const t0 = performance.now(); const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: C }, async (_, w) => { let i = 0; while (n < N) { n++; await limiter.limit(`id-${w}-${i++ % 1000}`); } }));
  const ms = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
  const rcpu = (await cpuOf()) - rc0;
  const stats = await client.info('commandstats');
  const line = (cmd) => { const m = stats.match(new RegExp(`cmdstat_${cmd}:calls=(\\d+),usec=(\\d+)`)); return m ? { calls: +m[1], usec: +m[2] } : { calls: 0, usec: 0 }; };
  const ev = line('evalsha'), ex = line('exec'), ping = line('ping');
  const redisUs = ev.usec + ex.usec; const calls = ev.calls + ex.calls;
  console.log(name.padEnd(24), `${Math.round(n / ms * 1000)}/s`.padStart(9), `redis cmd ${(redisUs / n).toFixed(2)} cpu ${(rcpu / n).toFixed(2)} µs/dec`, `client ${((cpu.user + cpu.system) / n).toFixed(1)} µs/dec`, `${(n / calls).toFixed(1)} dec/call`);
}
await measure('script (useScript)', { useScript: true });
await measure('batch', { batch: true });
await measure('script cbf', { countBlocked: false });
await measure('batch cbf', { countBlocked: false, batch: true });
await measure('multi', {});
await measure('multi c', {});
await client.quit();
