// The behavioural contract (test/contract/*-contract.ts: the single limiter
// with its model test, stacks with theirs, action ids, costs) as it runs inside
// workerd and Vercel's edge runtime, where mocha does not load: bundled with
// the library's src/ by esbuild (see bundle.ts) and run by the BDD runner of
// bdd.ts. On the in-memory store, or on @upstash/redis pointed at the
// Upstash-REST-compatible test endpoint (test/support/upstash-rest-endpoint.ts)
// over the runtime's own fetch, with `batch: false` and `batch: true`. Fewer
// random schedules than on Node: what is in question here is the runtime.

import type { Redis as UpstashRedis } from '@upstash/redis';
import { RollingRateLimiter } from '../../../src/index.js';
import { describeActionIdContract } from '../../contract/action-ids-contract.js';
import { describeCostContract } from '../../contract/cost-contract.js';
import { describeLimiterContract, type LimiterFactory } from '../../contract/limiter-contract.js';
import { describeStackContract } from '../../contract/stack-contract.js';
import { keyOf, RECORDS_FROM } from '../../support/redis-keys.js';
import { countBddTests, runBdd, type BddResult } from './bdd.js';

/** What to run: the store, and for @upstash/redis where its endpoint is. */
export type WebContractConfig =
  | { readonly store: 'memory'; readonly modelSchedules?: number }
  | { readonly store: 'upstash'; readonly url: string; readonly token: string; readonly modelSchedules?: number };

/** @upstash/redis's `Redis` class as the runtime's entry imports it (`@upstash/redis` or `@upstash/redis/cloudflare`). */
export type UpstashRedisClass = new (config: { url: string; token: string }) => UpstashRedis;

/** The run's result, with the library's view of the runtime. */
export interface WebContractResult extends BddResult {
  /** `typeof process`, `typeof Buffer`, `typeof setImmediate` where the contract ran: 'undefined' on a runtime without Node's globals. */
  readonly nodeGlobals: Readonly<Record<'process' | 'Buffer' | 'setImmediate', string>>;
}

/** Namespaces unique to this run (random from the web's crypto: no node:crypto here). */
function uniqueNamespaces(prefix: string): { next(suffix?: string): string } {
  const run = Array.from(crypto.getRandomValues(new Uint8Array(4)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  let counter = 0;
  return {
    next: (suffix = '') => `test:${prefix}:${run}:${(counter += 1)}:${suffix}`,
  };
}

/** Registers the contract on the in-memory store. */
function describeMemory(modelSchedules: number): void {
  const memory = (): LimiterFactory => (options) => new RollingRateLimiter(options);
  describeLimiterContract('the in-memory store', memory, { countBlockedFalse: true, actionIds: true, modelSchedules });
  describeStackContract('the in-memory store', memory, { modelSchedules: Math.ceil(modelSchedules / 2), ownStatePerLimiter: true });
  describeActionIdContract('the in-memory store', memory);
  describeCostContract('the in-memory store', memory);
}

/** Registers the contract on @upstash/redis, with `batch: false` and `batch: true`. */
function describeUpstash(client: UpstashRedis, modelSchedules: number): void {
  const namespaces = uniqueNamespaces('web-upstash');
  const memberCount = (namespace: string, id: string): Promise<number> => client.zcount(keyOf(namespace, id), RECORDS_FROM, '+inf');
  for (const batch of [false, true]) {
    const name = `@upstash/redis over fetch${batch ? ', batch: true' : ''}`;
    const factory = (): LimiterFactory => (options) => new RollingRateLimiter({ ...options, client, namespace: namespaces.next(options.namespace), batch });
    describeLimiterContract(name, factory, { countBlockedFalse: true, actionIds: true, modelSchedules, multiPath: !batch, batch });
    describeStackContract(name, factory, {
      modelSchedules: Math.ceil(modelSchedules / 2),
      foreignLimiter: (options) => new RollingRateLimiter(options),
      batch,
    });
    describeActionIdContract(name, factory);
    describeCostContract(name, factory, { multiPath: !batch, batch, memberCount });
  }
}

/** Registers the contract as `config` says. */
const registerContract = (config: WebContractConfig, Upstash: UpstashRedisClass) => (): void => {
  if (config.store === 'memory') describeMemory(config.modelSchedules ?? 300);
  else describeUpstash(new Upstash({ url: config.url, token: config.token }), config.modelSchedules ?? 160);
};

/** How many tests a run of `config` has (counted where the test runs, on Node, to compare with the runtime's passes). */
export function contractTestCount(config: WebContractConfig, Upstash: UpstashRedisClass): number {
  return countBddTests(registerContract(config, Upstash));
}

/** Runs the contract as `config` says; `Upstash` is the runtime's @upstash/redis class. */
export async function runContract(config: WebContractConfig, Upstash: UpstashRedisClass): Promise<WebContractResult> {
  const result = await runBdd(registerContract(config, Upstash));
  const globals = globalThis as Record<string, unknown>;
  return { ...result, nodeGlobals: { process: typeof globals.process, Buffer: typeof globals.Buffer, setImmediate: typeof globals.setImmediate } };
}
