// The library inside Vercel's edge runtime (the `edge-runtime` npm package, a
// dev dependency: the VM that `next dev` and `vercel dev` run middleware and
// edge functions in, with web APIs only: no `process`, no `Buffer`, no
// `node:` modules). A script bundled from src/ with esbuild
// (test/runtimes/web/bundle.ts) answers fetch events by running the
// behavioural contract (test/runtimes/web/contract.ts) on the in-memory store
// and on @upstash/redis over the runtime's fetch to the
// Upstash-REST-compatible test endpoint on 127.0.0.1, which forwards to a
// redis-server the harness starts.

import { expect } from 'chai';
import { EdgeRuntime } from 'edge-runtime';
import { join } from 'node:path';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { bundleForWeb } from './web/bundle.js';
import { EDGE_CONDITIONS, versionOf } from './web/runtimes.js';
import type { WebContractConfig, WebContractResult } from './web/contract.js';
import { expectContractPassed } from './web/expect-contract.js';

/** Posts `config` to the contract script and returns what it ran. */
async function runInEdgeRuntime(runtime: EdgeRuntime, config: WebContractConfig): Promise<WebContractResult> {
  const response = await runtime.dispatchFetch('http://edge.test/', { method: 'POST', body: JSON.stringify(config) });
  const text = await response.text();
  expect(response.status, text.slice(0, 3000)).to.equal(200);
  await response.waitUntil();
  return JSON.parse(text) as WebContractResult;
}

describe(`inside Vercel’s edge runtime (edge-runtime ${versionOf('edge-runtime')})`, function () {
  this.timeout(240_000);
  let runtime: EdgeRuntime | undefined;
  let redis: UsedRedis | undefined;
  let endpoint: UpstashRestEndpoint | undefined;

  before(async function () {
    this.timeout(120_000);
    const code = await bundleForWeb(join(import.meta.dirname, 'edge-runtime', 'contract-edge.ts'), { format: 'iife', conditions: EDGE_CONDITIONS });
    runtime = new EdgeRuntime({ initialCode: code });
    redis = await useRedis();
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
  });

  after(async () => {
    await endpoint?.close();
    await redis?.stop();
  });

  it('passes the contract on the in-memory store (limits, gaps, waits, dry runs, action ids and undo, stacks, costs; with the model tests)', async () => {
    const config: WebContractConfig = { store: 'memory' };
    expectContractPassed(await runInEdgeRuntime(runtime!, config), config, 'the edge runtime');
  });

  it('passes the contract on @upstash/redis over the runtime’s fetch to the test endpoint on 127.0.0.1 (batch: false and true)', async () => {
    endpoint!.resetStats();
    const config: WebContractConfig = { store: 'upstash', url: endpoint!.url, token: endpoint!.token };
    expectContractPassed(await runInEdgeRuntime(runtime!, config), config, 'the edge runtime');
    expect(endpoint!.stats.requests, 'HTTP requests the endpoint answered').to.be.above(1000);
    expect(endpoint!.stats.unauthorized).to.equal(0);
  });
});
