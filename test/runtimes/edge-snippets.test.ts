// The docs' edge snippets, each run as written in its runtime (they are a
// middleware and a Worker, not programs: test/docs/snippets.test.ts
// type-checks them and leaves running them to this file):
// examples/snippets/edge-nextjs-middleware.ts in Vercel's edge runtime, its
// `middleware(request)` called for each request as Next.js calls it (with
// `process.env` as Next.js provides it there, and `next/server` from
// examples/snippets/support/next-server.ts), and
// examples/snippets/edge-cloudflare-worker.ts as a module Worker in workerd
// without nodejs_compat; both on @upstash/redis pointed at the
// Upstash-REST-compatible test endpoint on 127.0.0.1.

import { expect } from 'chai';
import { EdgeRuntime } from 'edge-runtime';
import type { Miniflare } from 'miniflare';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../support/packed-package.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { bundleForWeb } from './web/bundle.js';
import { EDGE_CONDITIONS, WORKERD_CONDITIONS, workerdFor } from './web/runtimes.js';

const SNIPPETS = join(REPO, 'examples', 'snippets');
/** The package's main entry, as the snippets import it (examples/snippets/tsconfig.json maps it to src/ the same way). */
const LIBRARY = { 'rolling-window-limiter': join(REPO, 'src', 'index.ts') };
const RUN_HERE = ['edge-cloudflare-worker.ts', 'edge-nextjs-middleware.ts'];

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | null>;
  readonly body: string;
}

async function answerOf(response: Response): Promise<Answer> {
  const names = ['Retry-After', 'X-RateLimit-Remaining', 'x-middleware-next'];
  return { status: response.status, headers: Object.fromEntries(names.map((name) => [name, response.headers.get(name)])), body: await response.text() };
}

describe('the docs’ edge snippets, run in their runtimes', function () {
  this.timeout(120_000);
  let redis: UsedRedis | undefined;
  let endpoint: UpstashRestEndpoint | undefined;

  before(async () => {
    redis = await useRedis();
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
  });

  after(async () => {
    await endpoint?.close();
    await redis?.stop();
  });

  it('are every edge-*.ts snippet (test/docs/snippets.test.ts runs the others as programs)', () => {
    expect(readdirSync(SNIPPETS).filter((file) => /^edge-.*\.ts$/.test(file))).to.deep.equal(RUN_HERE);
  });

  it('edge-nextjs-middleware.ts in the edge runtime: 5 per 10 s per client IP, then 429 with Retry-After; batch: true in one request for concurrent ones', async () => {
    const code = await bundleForWeb(join(SNIPPETS, 'edge-nextjs-middleware.ts'), {
      format: 'iife',
      conditions: EDGE_CONDITIONS,
      alias: { ...LIBRARY, 'next/server': join(SNIPPETS, 'support', 'next-server.ts') },
      globalName: 'snippet',
    });
    const env = { UPSTASH_REDIS_REST_URL: endpoint!.url, UPSTASH_REDIS_REST_TOKEN: endpoint!.token };
    const runtime = new EdgeRuntime({
      initialCode: `${code}\naddEventListener('fetch', (event) => event.respondWith(snippet.middleware(event.request)));`,
      extend: (context) => Object.assign(context, { process: { env } }), // Next.js's edge runtime has process.env
    });
    const request = (ip: string) => runtime.dispatchFetch('http://app.test/api/hello', { headers: { 'x-forwarded-for': `${ip}, 10.0.0.1` } });
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i += 1) answers.push(await answerOf(await request('203.0.113.7')));
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200, 200, 200, 429]);
    expect(answers.slice(0, 5).map((answer) => answer.headers)).to.deep.equal(
      [4, 3, 2, 1, 0].map((left) => ({ 'Retry-After': null, 'X-RateLimit-Remaining': String(left), 'x-middleware-next': '1' })),
    );
    expect(answers[5]?.headers['Retry-After']).to.equal('10');
    expect(JSON.parse(answers[5]?.body ?? '')).to.deep.equal({ error: 'rate_limited', retryAfter: 10 });

    endpoint!.resetStats();
    const concurrent = await Promise.all(Array.from({ length: 8 }, () => request('198.51.100.9').then(answerOf)));
    expect(concurrent.filter((answer) => answer.status === 200)).to.have.length(5);
    expect(endpoint!.stats.requests, 'HTTP requests for 8 concurrent decisions, batched').to.be.below(8);
  });

  it('edge-cloudflare-worker.ts in workerd: 5 per 10 s per client IP, then 429 with Retry-After', async () => {
    const code = await bundleForWeb(join(SNIPPETS, 'edge-cloudflare-worker.ts'), { format: 'esm', conditions: WORKERD_CONDITIONS, alias: LIBRARY });
    const worker: Miniflare = workerdFor(code, { UPSTASH_REDIS_REST_URL: endpoint!.url, UPSTASH_REDIS_REST_TOKEN: endpoint!.token });
    try {
      const answers: Answer[] = [];
      for (let i = 0; i < 6; i += 1) {
        answers.push(await answerOf(await worker.dispatchFetch('http://worker.test/', { headers: { 'CF-Connecting-IP': '203.0.113.8' } })));
      }
      expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200, 200, 200, 429]);
      expect(answers[0]?.body).to.equal('Hello! 4 more in this window.');
      expect(answers[5]?.headers['Retry-After']).to.equal('10');
      expect(JSON.parse(answers[5]?.body ?? '')).to.deep.equal({ error: 'rate_limited', retryAfter: 10 });
      const other = await worker.dispatchFetch('http://worker.test/', { headers: { 'CF-Connecting-IP': '203.0.113.9' } });
      expect(other.status, 'another client').to.equal(200);
      await other.text();
    } finally {
      await worker.dispose();
    }
  });
});
