// The docs' edge snippets, each run as written in its runtime (they are a
// Worker and Next.js files, not programs: test/docs/snippets.test.ts
// type-checks them and leaves running them to test/runtimes):
// examples/snippets/edge-cloudflare-worker.ts here, as a module Worker in
// workerd without nodejs_compat, bundled as wrangler would and loaded in its
// module form (`modules: true`), on @upstash/redis pointed at the
// Upstash-REST-compatible test endpoint on 127.0.0.1; the Next.js ones
// (edge-nextjs-*.ts) in a real Next.js app by test/runtimes/next-app.test.ts.
//
// Concurrent requests matter on workerd: there one request's I/O cannot
// answer another request's promises, so the Worker is run with 20 requests
// at once, with `batch: true` and without, and every answer is checked.

import { expect } from 'chai';
import type { Miniflare } from 'miniflare';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../support/packed-package.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { bundleForWeb } from './web/bundle.js';
import { WORKERD_CONDITIONS, workerdFor } from './web/runtimes.js';

const SNIPPETS = join(REPO, 'examples', 'snippets');
/** The package's main entry, as the snippets import it (examples/snippets/tsconfig.json maps it to src/ the same way). */
const LIBRARY = { 'rolling-window-limiter': join(REPO, 'src', 'index.ts') };
const WORKER = 'edge-cloudflare-worker.ts';
/** The edge-*.ts snippets: the Worker, run here, and the Next.js files, run by next-app.test.ts. */
const EDGE_SNIPPETS = [WORKER, 'edge-nextjs-middleware.ts', 'edge-nextjs-proxy.ts'];

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: string;
}

async function answerOf(response: Response): Promise<Answer> {
  return { status: response.status, retryAfter: response.headers.get('Retry-After'), body: await response.text() };
}

/** What the Worker answers the `n`th request of a client in a window of 5. */
const expected = (n: number): Answer =>
  n < 5
    ? { status: 200, retryAfter: null, body: `Hello! ${4 - n} more in this window.` }
    : { status: 429, retryAfter: '10', body: JSON.stringify({ error: 'rate_limited', retryAfter: 10 }) };

/** Orders answers by status, then body, so that concurrent requests of one client compare as a set. */
const sorted = (answers: readonly Answer[]): Answer[] => [...answers].sort((a, b) => a.status - b.status || (a.body < b.body ? -1 : a.body > b.body ? 1 : 0));

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
    expect(readdirSync(SNIPPETS).filter((file) => /^edge-.*\.ts$/.test(file))).to.deep.equal(EDGE_SNIPPETS);
  });

  for (const batch of [false, true]) {
    it(`${WORKER} in workerd, in its module form${batch ? ', with batch: true' : ''}: 5 per 10 s per client IP, sequential and 20 concurrent requests`, async () => {
      let edited = false;
      const code = await bundleForWeb(join(SNIPPETS, WORKER), {
        format: 'esm',
        conditions: WORKERD_CONDITIONS,
        alias: LIBRARY,
        editEntry: (source) => {
          if (!batch) return source;
          const withBatch = source.replace(/^( +)countBlocked: false,$/m, '$1countBlocked: false,\n$1batch: true,');
          edited = withBatch !== source;
          return withBatch;
        },
      });
      expect(edited, 'the Worker’s options were given batch: true').to.equal(batch);
      const worker: Miniflare = workerdFor(code, { UPSTASH_REDIS_REST_URL: endpoint!.url, UPSTASH_REDIS_REST_TOKEN: endpoint!.token });
      const ips = batch ? { one: '203.0.113.20', many: '198.51.100.20', others: '192.0.2' } : { one: '203.0.113.10', many: '198.51.100.10', others: '192.0.3' };
      const request = (ip: string): Promise<Answer> => worker.dispatchFetch('http://worker.test/', { headers: { 'CF-Connecting-IP': ip } }).then(answerOf);
      try {
        const sequential: Answer[] = [];
        for (let i = 0; i < 6; i += 1) sequential.push(await request(ips.one));
        expect(sequential, 'sequential requests of one client').to.deep.equal([0, 1, 2, 3, 4, 5].map(expected));

        // 20 at once: 8 from one client (5 admitted, whichever 5), one from each of 12 others.
        const others = Array.from({ length: 12 }, (_, i) => `${ips.others}.${i + 1}`);
        const concurrent = await Promise.all([...Array.from({ length: 8 }, () => ips.many), ...others].map(request));
        expect(sorted(concurrent.slice(0, 8)), '8 concurrent requests of one client').to.deep.equal(sorted([0, 1, 2, 3, 4, 5, 6, 7].map(expected)));
        expect(concurrent.slice(8), 'concurrent requests of 12 other clients').to.deep.equal(others.map(() => expected(0)));

        // Every concurrent decision reached Redis.
        expect(await request(ips.many), 'the client of 8, once more').to.deep.equal(expected(8));
        expect(await request(others[0] as string), 'one of the 12, once more').to.deep.equal(expected(1));
      } finally {
        await worker.dispose();
      }
    });
  }
});
