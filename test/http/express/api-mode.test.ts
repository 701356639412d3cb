// The mode docs/http.md recommends for an API, against the default, over real
// HTTP on an injected clock: 2 requests per 10 s with a 500 ms gap, and a
// client that sends three requests 100 ms apart. Counting blocked requests
// locks it out for the whole window; not counting them lets it back in as
// soon as the gap has passed.

import { expect } from 'chai';
import express from 'express';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit } from '../../../src/http/express/express-middleware.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

describe('rateLimit (Express): the mode for an API', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  /** Three requests 100 ms apart, then one 600 ms after the first; the statuses and Retry-After of each. */
  async function burst(countBlocked: boolean): Promise<string[]> {
    let nowUs = 1_700_000_000_000_000;
    const limiter = new RollingRateLimiter({ interval: '10s', maxInInterval: 2, minDifference: '500ms', countBlocked, clock: () => nowUs });
    const app = express();
    app.use(rateLimit({ limiter }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const server = await serve(app);
    servers.push(server);
    const seen: string[] = [];
    for (const atMs of [0, 100, 200, 600]) {
      nowUs = 1_700_000_000_000_000 + atMs * 1000;
      const response = await get(`${server.url}/`);
      seen.push(`${atMs} ms: ${response.status}${response.headers['Retry-After'] === undefined ? '' : ` Retry-After: ${response.headers['Retry-After']}`}`);
    }
    return seen;
  }

  it('with countBlocked: true (the default), a second quick request locks the client out for the window', async () => {
    expect(await burst(true)).to.deep.equal(['0 ms: 200', '100 ms: 429 Retry-After: 10', '200 ms: 429 Retry-After: 10', '600 ms: 429 Retry-After: 10']);
  });

  it('with countBlocked: false, the client is back once the gap has passed', async () => {
    expect(await burst(false)).to.deep.equal(['0 ms: 200', '100 ms: 429 Retry-After: 1', '200 ms: 429 Retry-After: 1', '600 ms: 200']);
  });
});
