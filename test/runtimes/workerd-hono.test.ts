// rolling-window-limiter/hono in a module Worker inside workerd (miniflare),
// without the `nodejs_compat` flag: test/runtimes/workerd/hono-worker.ts,
// bundled from src/ with esbuild, its limiter on @upstash/redis (from the
// Worker's bindings) talking to the Upstash-REST-compatible test endpoint on
// 127.0.0.1, which forwards to a redis-server the harness starts; the client
// IP from CF-Connecting-IP (getConnInfo of 'hono/cloudflare-workers').

import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { Miniflare } from 'miniflare';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { keyOf, RECORDS_FROM } from '../support/redis-keys.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { bundleForWeb } from './web/bundle.js';
import { versionOf, WORKERD_CONDITIONS, workerdFor } from './web/runtimes.js';

describe(`rolling-window-limiter/hono in a Worker inside workerd (miniflare ${versionOf('miniflare')}), without nodejs_compat, on @upstash/redis`, function () {
  this.timeout(120_000);
  let redis: UsedRedis | undefined;
  let endpoint: UpstashRestEndpoint | undefined;

  let honoWorker: Miniflare | undefined;
  let reader: Redis | undefined;
  const namespace = `test:workerd-hono:${randomUUID()}`;

  before(async function () {
    this.timeout(120_000);
    redis = await useRedis();
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
    const code = await bundleForWeb(join(import.meta.dirname, 'workerd', 'hono-worker.ts'), { format: 'esm', conditions: WORKERD_CONDITIONS });
    honoWorker = workerdFor(code, { UPSTASH_REDIS_REST_URL: endpoint.url, UPSTASH_REDIS_REST_TOKEN: endpoint.token, NAMESPACE: namespace });
    await honoWorker.ready;
    reader = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });

  after(async () => {
    await honoWorker?.dispose();
    await reader?.quit();
    await endpoint?.close();
    await redis?.stop();
  });

  /** A request from `ip`, as Cloudflare's edge forwards it: the client IP in CF-Connecting-IP. */
  const from = async (ip: string): Promise<{ status: number; headers: Record<string, string | null>; body: unknown }> => {
    const response = await honoWorker!.dispatchFetch('http://worker.test/api/hello', { headers: { 'CF-Connecting-IP': ip } });
    const headers = Object.fromEntries(['RateLimit-Policy', 'RateLimit', 'Retry-After'].map((name) => [name, response.headers.get(name)]));
    return { status: response.status, headers, body: await response.json() };
  };

  it('admits 3 a minute per client IP (an IPv6 client by its /56), answers 429 with exact headers, and keeps the admissions in Redis', async () => {
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await from('203.0.113.7'));
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200, 429]);
    expect(answers.map((answer) => answer.headers.RateLimit)).to.deep.equal(['"api";r=2', '"api";r=1', '"api";r=0;t=60', '"api";r=0;t=60']);
    expect(answers[0]?.body).to.deep.equal({ hello: 'world', remaining: 2 });
    expect(answers[3]).to.deep.equal({
      status: 429,
      headers: { 'RateLimit-Policy': '"api";q=3;w=60', RateLimit: '"api";r=0;t=60', 'Retry-After': '60' },
      body: { error: 'rate_limited', retryAfterSeconds: 60 },
    });
    const v6 = [];
    for (const ip of ['2001:db8:0:1::1', '2001:db8:0:1::ff', '2001:db8:0:1:ffff::1', '2001:db8:0:1::2']) v6.push((await from(ip)).status);
    expect(v6, 'one /56').to.deep.equal([200, 200, 200, 429]);
    expect((await from('198.51.100.1')).status, 'another client').to.equal(200);
    expect(await reader!.zcount(keyOf(namespace, '203.0.113.7'), RECORDS_FROM, '+inf'), 'admitted requests only (countBlocked: false)').to.equal(3);
    expect(await reader!.zcount(keyOf(namespace, '2001:db8::/56'), RECORDS_FROM, '+inf')).to.equal(3);
  });
});
