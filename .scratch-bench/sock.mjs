import net from 'node:net';
const server = net.createServer((s) => s.on('data', () => {}));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const sock = net.connect(server.address().port, '127.0.0.1');
await new Promise((r) => sock.on('connect', r));
for (const size of [100, 1000, 10000, 100000]) {
  const buf = Buffer.alloc(size, 120);
  const n = Math.round(2e7 / size / 4) + 100;
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let i = 0; i < n; i++) { sock.write(buf); if (i % 50 === 0) await new Promise((r) => setImmediate(r)); }
  await new Promise((r) => setImmediate(r));
  const c = process.cpuUsage(c0);
  console.log(size, 'bytes:', ((c.user + c.system) / n).toFixed(1), 'µs cpu/write', ((c.user + c.system) / n / size * 1000).toFixed(1), 'ns/byte', 'sys share', (c.system / (c.user + c.system)).toFixed(2));
}
sock.destroy(); server.close();
