import { RollingRateLimiter } from 'rolling-window-limiter';
import { freePort } from './support/free-port.js';

const push = new RollingRateLimiter({ namespace: 'push', interval: '1m', maxInInterval: 1 });
process.env.PORT = String(await freePort()); // the docs' code serves on PORT: a free one for this run

// docs:begin
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRateLimitHeaders, retryAfterSeconds } from 'rolling-window-limiter/express';

const headersFor = createRateLimitHeaders(push);

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const info = await push.limitWithInfo(req.socket.remoteAddress ?? 'unknown'); // behind a proxy: the client IP it forwards
  for (const [name, value] of Object.entries(headersFor(info))) res.setHeader(name, value);
  if (info.blocked) {
    res.writeHead(429, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) }));
    return;
  }
  res.end('ok');
}

createServer((req, res) => {
  handle(req, res).catch(() => {
    res.statusCode = 500; // e.g. the store failed under onStoreError: 'throw'
    res.end();
  });
}).listen(Number(process.env.PORT ?? 3000));
// docs:end

for (let request = 1; request <= 2; request++) {
  const response = await fetch(`http://127.0.0.1:${process.env.PORT}/`);
  console.log(response.status, await response.text());
}
process.exit(0); // the server above would keep the process running
