// The header helpers without Express: the plain `node:http` server shown in
// docs/http.md, over real HTTP.

import { expect } from 'chai';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RateLimiterStack, RollingRateLimiter } from '../../../src/index.js';
import { createRateLimitHeaders, retryAfterSeconds } from '../../../src/http/express/express-middleware.js';
import { TestClock } from '../../support/test-clock.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

describe('the header helpers on plain node:http', () => {
  let server: RunningServer | undefined;

  after(async () => {
    await server?.close();
  });

  it('limits like the middleware', async () => {
    const clock = new TestClock();
    const perMinute = new RollingRateLimiter({ namespace: 'push-minute', interval: 60_000, maxInInterval: 10, clock: clock.read });
    const every3s = new RollingRateLimiter({ namespace: 'push-3s', interval: 3_000, maxInInterval: 1, clock: clock.read });
    const push = new RateLimiterStack([perMinute, every3s]);
    const headersFor = createRateLimitHeaders(push);

    // As in docs/http.md.
    async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const info = await push.limitWithInfo(req.socket.remoteAddress ?? 'unknown');
      for (const [name, value] of Object.entries(headersFor(info))) res.setHeader(name, value);
      if (info.blocked) {
        res.writeHead(429, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) }));
        return;
      }
      res.end('ok');
    }
    server = await serve((req, res) => {
      handle(req, res).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });

    const first = await get(server.url);
    expect(first.status).to.equal(200);
    expect(first.headers).to.deep.equal({ 'RateLimit-Policy': '"push-minute";q=10;w=60, "push-3s";q=1;w=3', RateLimit: '"push-3s";r=0;t=3' });
    clock.advanceMs(2_000);
    const second = await get(server.url);
    expect(second.status).to.equal(429);
    expect(second.headers).to.include({ RateLimit: '"push-3s";r=0;t=3', 'Retry-After': '3' });
    expect(JSON.parse(second.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 3 });
  });
});
