// The library inside Cloudflare's workerd (the `workerd` binary of miniflare's
// npm package, a dev dependency pinned to the last release that runs on Node 20),
// as a module Worker WITHOUT the `nodejs_compat` flag: no `process`, no
// `Buffer`, no `node:` modules. The Worker is bundled from src/ with esbuild
// (test/runtimes/web/bundle.ts) and runs the behavioural contract
// (test/runtimes/web/contract.ts) on the in-memory store and on @upstash/redis
// over workerd's fetch to the Upstash-REST-compatible test endpoint on
// 127.0.0.1, which forwards to a redis-server the harness starts.

import { expect } from 'chai';
import type { Miniflare } from 'miniflare';
import { join } from 'node:path';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { bundleForWeb } from './web/bundle.js';
import { versionOf, WORKERD_CONDITIONS, workerdFor } from './web/runtimes.js';
import type { WebContractConfig, WebContractResult } from './web/contract.js';
import { expectContractPassed } from './web/expect-contract.js';

/** Posts `config` to the contract Worker and returns what it ran. */
async function runInWorkerd(worker: Miniflare, config: WebContractConfig): Promise<WebContractResult> {
  const response = await worker.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify(config) });
  const text = await response.text();
  expect(response.status, text.slice(0, 3000)).to.equal(200);
  return JSON.parse(text) as WebContractResult;
}

describe(`inside workerd (miniflare ${versionOf('miniflare')}), without nodejs_compat`, function () {
  this.timeout(240_000);
  let worker: Miniflare | undefined;
  let redis: UsedRedis | undefined;
  let endpoint: UpstashRestEndpoint | undefined;

  before(async function () {
    this.timeout(120_000);
    const code = await bundleForWeb(join(import.meta.dirname, 'workerd', 'contract-worker.ts'), { format: 'esm', conditions: WORKERD_CONDITIONS });
    worker = workerdFor(code);
    await worker.ready;
    redis = await useRedis();
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
  });

  after(async () => {
    await worker?.dispose();
    await endpoint?.close();
    await redis?.stop();
  });

  it('passes the contract on the in-memory store (limits, gaps, waits, dry runs, action ids and undo, stacks, costs; with the model tests)', async () => {
    const config: WebContractConfig = { store: 'memory' };
    expectContractPassed(await runInWorkerd(worker!, config), config, 'workerd');
  });

  it('passes the contract on @upstash/redis over workerd’s fetch to the test endpoint on 127.0.0.1 (batch: false and true)', async () => {
    endpoint!.resetStats();
    const config: WebContractConfig = { store: 'upstash', url: endpoint!.url, token: endpoint!.token };
    expectContractPassed(await runInWorkerd(worker!, config), config, 'workerd');
    expect(endpoint!.stats.requests, 'HTTP requests the endpoint answered').to.be.above(1000);
    expect(endpoint!.stats.unauthorized).to.equal(0);
  });
});
