// rolling-window-limiter/hono under Deno, run by test/runtimes/deno.test.ts in
// a throwaway project where the packed package is installed (the imports of
// src/ below are rewritten to the package's entries there, and Hono is this
// repository's copy, linked into the project's node_modules). In process, with
// Hono's `app.request()`, on the in-memory store and an injected clock, so that
// every status and header is exact. Throws on the first difference; prints one
// JSON line at the end.

import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit } from '../../../src/http/hono/hono-middleware.js';

const START_US = 1_800_000_000_000_000;
let nowUs = START_US;
const limiter = new RollingRateLimiter({ namespace: 'search', interval: '1m', maxInInterval: 2, countBlocked: false, clock: () => nowUs });

const app = new Hono();
app.use(rateLimit({ limiter, key: (c) => c.req.header('x-user') }));
app.get('/', (c) => c.text('ok'));
app.onError((error, c) => c.json({ name: error.name }, 500));

/** The status, rate-limit headers, content type and body of `GET /` as `user` (no header when `undefined`). */
async function get(user: string | undefined) {
  const response = await app.request('/', { headers: user === undefined ? {} : { 'x-user': user } });
  const headers: Record<string, string> = {};
  for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After']) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: response.status, headers, contentType: response.headers.get('content-type'), body: await response.text() };
}

const policy = '"search";q=2;w=60';
const first = await get('ada');
assert.deepEqual([first.status, first.body, first.headers], [200, 'ok', { 'RateLimit-Policy': policy, RateLimit: '"search";r=1' }]);
assert.match(first.contentType ?? '', /^text\/plain/, 'the route’s own Content-Type');
assert.deepEqual((await get('ada')).headers, { 'RateLimit-Policy': policy, RateLimit: '"search";r=0;t=60' });
nowUs += 10_000_000;
const blocked = await get('ada');
assert.deepEqual(blocked, {
  status: 429,
  headers: { 'RateLimit-Policy': policy, RateLimit: '"search";r=0;t=50', 'Retry-After': '50' },
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify({ error: 'rate_limited', retryAfterSeconds: 50 }),
});
assert.equal((await get('grace')).status, 200, 'another key has a limit of its own');
const keyless = await get(undefined);
assert.deepEqual([keyless.status, keyless.body], [500, JSON.stringify({ name: 'TypeError' })], 'a request without a key is refused, not let through');
nowUs += 50_000_000;
assert.equal((await get('ada')).status, 200, 'the first request has left the window 60 s after it');

const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;
console.log(
  JSON.stringify({
    runtime: deno === undefined ? `node ${process.version}` : `deno ${deno.version.deno}`,
    library: import.meta.resolve('../../../src/http/hono/hono-middleware.js'),
    statuses: [first.status, blocked.status, keyless.status],
  }),
);
