// Loaded with `node --import tsx --import <this file>` before one of
// @fastify/rate-limit's own test files (see fastify-own-suite.test.ts): the
// plugin those tests register then counts with rollingWindowStore wherever a
// test leaves `store` out, instead of the plugin's LocalStore. A test that
// passes its own `store` keeps it. With OWN_SUITE_REDIS_URL set, the store
// counts on that Redis (through ioredis) instead of in memory.

import { createRequire } from 'node:module';
import { after, afterEach, mock } from 'node:test';
import { Redis } from 'ioredis';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';

type Plugin = ((instance: unknown, options: Record<string, unknown>) => Promise<void>) & Record<string | symbol, unknown>;

const require = createRequire(import.meta.url);
const pluginPath = require.resolve('@fastify/rate-limit');
const plugin = require(pluginPath) as Plugin;
const original = plugin['fastifyRateLimit'] as Plugin;

// These tests fake time with node:test's mock.timers, which fakes Date but not
// performance.now(). The store's clock is Date.now() refined by
// performance.now() within the current millisecond; with performance.now()
// following Date.now() here, it reads exactly the (mocked) Date.now(), so a
// hit made at a mocked instant is recorded at that instant, not up to a
// millisecond of real time later.
performance.now = () => Date.now();

// A test that fails before its own `clock.reset()` would leave the timers
// faked for every later test of its file (they would then hang); reset them
// after each test, which is what each passing test does anyway.
afterEach(() => {
  mock.timers.reset();
});

const redisUrl = process.env['OWN_SUITE_REDIS_URL'];
let client: Redis | undefined;
let stores = 0;

function clientOption(): { client?: Redis } {
  if (redisUrl === undefined) return {};
  // Created on first use, so a file that never registers the plugin opens no connection.
  client ??= new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  return { client };
}

const wrapped = (async (instance, options) => {
  if (options['store'] !== undefined) return original(instance, options);
  stores += 1;
  // A namespace per plugin instance, so each test counts from zero as with a fresh LocalStore.
  const store = rollingWindowStore({ ...clientOption(), namespace: `own-suite-${process.pid}-${stores}-` });
  return original(instance, { ...options, store });
}) as Plugin;
for (const name of Reflect.ownKeys(plugin)) {
  if (name !== 'length' && name !== 'name' && name !== 'prototype') wrapped[name] = plugin[name];
}
wrapped['default'] = wrapped;
wrapped['fastifyRateLimit'] = wrapped;

const cached = require.cache[pluginPath];
if (cached === undefined) throw new Error(`@fastify/rate-limit was not loaded from ${pluginPath}`);
cached.exports = wrapped;

// Let the test file's process end once its tests are done.
after(() => {
  client?.disconnect();
  client = undefined;
});
