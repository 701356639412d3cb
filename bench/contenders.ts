// Every contender of the bench, in one registry: this library's modes (one
// line each in LIBRARY_MODES), the libraries users would otherwise pick, and
// the floors: the library's own MULTI commands and decide script sent bare,
// and a PING per decision. Each answers one question per call: blocked?
// The bench process and each contender's child process (worker.ts) use the
// same list and find a contender by its id.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { createClient } from 'redis5';
import { InMemoryRateLimiter, IORedisRateLimiter, NodeRedisRateLimiter } from 'rolling-rate-limiter';
import type * as Library from '../src/index.js';
import { type LogAttempt, microBatcher, SLIDING_LOG_LUA, SLIDING_LOG_SHA1, slidingLogCall } from './floors.js';
import type * as MultiPath from '../src/redis/multi-store.js';
import type * as DecideCodec from '../src/redis/decide/decide-codec.js';
import type * as DecideScript from '../src/redis/decide/decide-script.js';

/** The rules of one measurement, in rolling-rate-limiter's names (ms). */
export interface Rules {
  readonly interval: number;
  readonly maxInInterval: number;
  readonly minDifference: number;
}

export type Backend = 'ioredis' | 'node-redis5' | 'memory';

export interface Clients {
  readonly ioredis: Redis;
  readonly nodeRedis: ReturnType<typeof createClient>;
}

/** One contender built for one measurement. */
export interface Instance {
  /** One decision: resolves true when blocked. */
  readonly decide: (id: string) => Promise<boolean>;
  /** The Redis key that holds `id` (for MEMORY USAGE and pre-filling). */
  readonly keyOf?: (id: string) => string;
  readonly dispose?: () => void;
}

export interface Contender {
  /** e.g. `lib-multi@ioredis`: used in results, targets and --only. */
  readonly id: string;
  readonly label: string;
  readonly family: 'library' | 'peer' | 'floor';
  readonly backend: Backend;
  /** Builds a fresh instance on a namespace unique to the measurement. */
  readonly create: (rules: Rules, namespace: string, clients: Clients) => Instance | Promise<Instance>;
}

// The library as users run it: the CommonJS build in dist/ (`npm run bench` builds first), not the sources
// through tsx, whose transform adds work to every call that no user pays. Types come from the sources.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const newest = (dir: string): number =>
  Math.max(...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs)));
const ENTRY = join(ROOT, 'dist/cjs/index.js');
if (!existsSync(ENTRY) || statSync(ENTRY).mtimeMs < newest(join(ROOT, 'src'))) {
  throw new Error('dist/ is missing or older than src/: run `npm run bench`, which builds first');
}
const built = <T>(path: string): T => createRequire(import.meta.url)(join(ROOT, 'dist/cjs', path)) as T;
const { RollingRateLimiter, RateLimiterStack } = built<typeof Library>('index.js');
const { attemptCommands } = built<typeof MultiPath>('redis/multi-store.js');
const { encodeCall } = built<typeof DecideCodec>('redis/decide/decide-codec.js');
const { DECIDE_SCRIPT } = built<typeof DecideScript>('redis/decide/decide-script.js');
const { VERDICT } = built<typeof DecideCodec>('redis/decide/decide-codec.js');

type LimiterOptions = Partial<ConstructorParameters<typeof RollingRateLimiter>[0]>;

/**
 * This library's Redis modes, each measured on both clients (unless `only`):
 * a new mode is one line here, and its targets a line or two in targets.ts.
 */
const LIBRARY_MODES: readonly { mode: string; label: string; options: LimiterOptions; stack?: true; only?: Backend }[] = [
  { mode: 'multi', label: 'MULTI path (countBlocked true, useScript: false)', options: { countBlocked: true, useScript: false } },
  { mode: 'script', label: 'script path (countBlocked false)', options: { countBlocked: false } },
  { mode: 'script-cb', label: 'default path (the script, countBlocked true)', options: { countBlocked: true } },
  { mode: 'stack3', label: '3-tier stack (s/min/day, countBlocked false)', options: { countBlocked: false }, stack: true },
  { mode: 'redisclock', label: "clock 'redis' (script, countBlocked true)", options: { clock: 'redis' }, only: 'ioredis' },
  { mode: 'batch', label: 'script path, batch: true (countBlocked false)', options: { countBlocked: false, batch: true } },
  { mode: 'batch-stack3', label: '3-tier stack, batch: true (countBlocked false)', options: { countBlocked: false, batch: true }, stack: true },
];

/** The library's key layout, `<namespace>:{<id>}` (these ids need no escaping). */
const libraryKey = (namespace: string, id: string): string => `${namespace}:{${id}}`;

/** The stack's tiers: per second (max / 2), the scenario's own rule (the tier that stands for the id), per day (max × 100). */
function stackTiers(rules: Rules, namespace: string): (Rules & { namespace: string })[] {
  return [
    { namespace: `${namespace}-second`, interval: 1_000, maxInInterval: Math.max(1, Math.floor(rules.maxInInterval / 2)), minDifference: 0 },
    { namespace: `${namespace}-minute`, ...rules },
    { namespace: `${namespace}-day`, interval: 86_400_000, maxInInterval: rules.maxInInterval * 100, minDifference: 0 },
  ];
}

/** What the floors send, on one client: the fewest calls and reads each client allows. */
interface Wire {
  readonly client: Redis | Clients['nodeRedis'];
  /** One MULTI of `commands`; resolves with the second reply (the ZCARD of attemptCommands(), the ZRANGE of the card's). */
  readonly multiCount: (commands: readonly (readonly (string | number)[])[]) => Promise<unknown>;
  readonly evalsha: (sha1: string, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;
  readonly loadScript: (lua: string) => Promise<unknown>;
  readonly ping: () => Promise<unknown>;
}

function wire(backend: Backend, { ioredis, nodeRedis }: Clients): Wire {
  if (backend === 'ioredis') {
    return {
      client: ioredis,
      multiCount: async (commands) => (await ioredis.multi(commands as (string | number)[][]).exec())?.[1]?.[1],
      evalsha: (sha1, keys, args) => ioredis.evalsha(sha1, keys.length, ...keys, ...args),
      loadScript: (lua) => ioredis.script('LOAD', lua),
      ping: () => ioredis.ping(),
    };
  }
  return {
    client: nodeRedis,
    multiCount: async (commands) => {
      const multi = nodeRedis.multi();
      for (const command of commands) multi.addCommand(command.map(String));
      return (await multi.exec())[1];
    },
    evalsha: (sha1, keys, args) => nodeRedis.sendCommand(['EVALSHA', sha1, String(keys.length), ...keys, ...args.map(String)]),
    loadScript: (lua) => nodeRedis.sendCommand(['SCRIPT', 'LOAD', lua]),
    ping: () => nodeRedis.ping(),
  };
}

let sequence = 0;
/** A microsecond timestamp and a member unique to the call: what any caller must produce. */
function stamp(): { now: number; member: string } {
  sequence += 1;
  return { now: Date.now() * 1000 + (sequence % 1000), member: `${process.pid}-${sequence.toString(36)}` };
}

const windowRule = (rules: Rules, countBlocked: boolean) => ({
  intervalUs: rules.interval * 1000,
  maxInInterval: rules.maxInInterval,
  countsCost: false,
  minDifferenceUs: rules.minDifference * 1000,
  countBlocked,
  // The default timeout: records outlive their window by the time a call may be in flight.
  inFlightUs: 2_000_000,
});

/**
 * A bare EVALSHA of the decide script with the keys and arguments the script path sends (countBlocked false,
 * encodeCall() from the build), read only for its allowed flag.
 */
function bareScript(backend: Backend, tiersOf: (rules: Rules, namespace: string) => (Rules & { namespace: string })[]): Contender['create'] {
  return async (rules, namespace, clients) => {
    const redis = wire(backend, clients);
    if ((await redis.loadScript(DECIDE_SCRIPT.lua)) !== DECIDE_SCRIPT.sha1) throw new Error('SCRIPT LOAD answered another SHA1 than DECIDE_SCRIPT.sha1');
    const tiers = tiersOf(rules, namespace).map((tier) => ({ namespace: tier.namespace, rule: windowRule(tier, false) }));
    return {
      keyOf: (id) => libraryKey((tiers[1] ?? tiers[0])!.namespace, id),
      decide: async (id) => {
        // encodeCall() reads only each tier's key and rule: a floor has no store to give it.
        const withKeys = tiers.map(({ namespace: space, rule }) => ({ key: libraryKey(space, id), rule })) as unknown as DecideCodec.ScriptDecision['tiers'];
        const { keys, args } = encodeCall([{ tiers: withKeys, now: stamp().now, dryRun: false }]);
        const reply = await redis.evalsha(DECIDE_SCRIPT.sha1, keys, args);
        const verdict = Array.isArray(reply) ? Number(reply[0]) : undefined;
        return !(verdict !== undefined && verdict >= VERDICT.allowed);
      },
    };
  };
}

/**
 * The minimal sliding-log Lua (floors.ts), one EVALSHA per decision or batched like `batch: true`: what a rolling
 * window costs Redis at the least, to set the decide script against.
 */
function slidingLog(backend: Backend, batched: boolean): Contender['create'] {
  return async (rules, namespace, clients) => {
    const redis = wire(backend, clients);
    if ((await redis.loadScript(SLIDING_LOG_LUA)) !== SLIDING_LOG_SHA1) throw new Error('SCRIPT LOAD answered another SHA1 than SLIDING_LOG_SHA1');
    const send = (attempts: LogAttempt[]): Promise<unknown> => {
      const { keys, args } = slidingLogCall(attempts, rules.maxInInterval, rules.interval);
      return redis.evalsha(SLIDING_LOG_SHA1, keys, args);
    };
    const attempt = (id: string): LogAttempt => {
      const { now, member } = stamp();
      return { key: libraryKey(namespace, id), cutoff: String(now - rules.interval * 1000), now: String(now), member };
    };
    const decide = batched
      ? microBatcher((attempts: LogAttempt[]) => send(attempts).then((reply) => (Array.isArray(reply) ? reply : [reply]).map(Number)))
      : (attempt: LogAttempt) => send([attempt]).then(Number);
    return { keyOf: (id) => libraryKey(namespace, id), decide: async (id) => (await decide(attempt(id))) >= rules.maxInInterval };
  };
}

function redisContenders(backend: 'ioredis' | 'node-redis5'): Contender[] {
  const on = (id: string, label: string, family: Contender['family'], create: Contender['create']): Contender => ({
    id: `${id}@${backend}`,
    label: `${label}, ${backend}`,
    family,
    backend,
    create,
  });
  const library = LIBRARY_MODES.filter((m) => (m.only ?? backend) === backend).map(({ mode, label, options, stack }) =>
    on(`lib-${mode}`, `this lib, ${label}`, 'library', (rules, namespace, clients) => {
      const client = wire(backend, clients).client;
      if (stack === true) {
        const tiers = stackTiers(rules, namespace);
        const stacked = new RateLimiterStack(
          tiers.map((tier) => new RollingRateLimiter({ ...tier, ...options, client })),
          { batch: options.batch === true },
        );
        return { decide: (id) => stacked.limit(id), keyOf: (id) => libraryKey(tiers[1]!.namespace, id) };
      }
      const limiter = new RollingRateLimiter({ ...rules, ...options, client, namespace });
      return { decide: (id) => limiter.limit(id), keyOf: (id) => libraryKey(namespace, id) };
    }),
  );
  const seconds = (rules: Rules): number => Math.max(1, Math.round(rules.interval / 1000));
  return [
    ...library,
    on('rrl', 'rolling-rate-limiter 0.4.2', 'peer', (rules, namespace, clients) => {
      const options = { namespace: `${namespace}:`, ...rules };
      const limiter =
        backend === 'ioredis'
          ? new IORedisRateLimiter({ ...options, client: clients.ioredis })
          : new NodeRedisRateLimiter({ ...options, client: clients.nodeRedis });
      return { decide: (id) => limiter.limit(id), keyOf: (id) => `${namespace}:${id}` };
    }),
    on('rlf', 'rate-limiter-flexible 11.4 (fixed window)', 'peer', (rules, namespace, clients) =>
      flexible(
        new RateLimiterRedis({
          storeClient: wire(backend, clients).client,
          useRedisPackage: backend === 'node-redis5',
          keyPrefix: namespace,
          points: rules.maxInInterval,
          duration: seconds(rules),
        }),
      ),
    ),
    on('floor-multi', 'floor: bare MULTI of attemptCommands()', 'floor', (rules, namespace, clients) => {
      const redis = wire(backend, clients);
      const rule = windowRule(rules, true);
      return {
        keyOf: (id) => libraryKey(namespace, id),
        // Read for |S| only: no scenario on Redis has a gap rule.
        decide: async (id) => {
          const { now, member } = stamp();
          return Number(await redis.multiCount(attemptCommands(libraryKey(namespace, id), rule, now, member))) >= rule.maxInInterval;
        },
      };
    }),
    on('floor-card', "floor: bare MULTI of the card's four commands", 'floor', (rules, namespace, clients) => {
      const redis = wire(backend, clients);
      const ttl = String(rules.interval);
      return {
        keyOf: (id) => libraryKey(namespace, id),
        // ZREMRANGEBYSCORE, ZRANGE 0 -1, ZADD, PEXPIRE: the design the library started from, its window read whole.
        decide: async (id) => {
          const { now, member } = stamp();
          const key = libraryKey(namespace, id);
          const commands = [
            ['zremrangebyscore', key, '-inf', String(now - rules.interval * 1000)],
            ['zrange', key, '0', '-1'],
            ['zadd', key, String(now), member],
            ['pexpire', key, ttl],
          ];
          return ((await redis.multiCount(commands)) as unknown[]).length >= rules.maxInInterval;
        },
      };
    }),
    on(
      'floor-lua',
      'floor: bare EVALSHA of the decide script',
      'floor',
      bareScript(backend, (rules, namespace) => [{ namespace, ...rules }]),
    ),
    on('floor-lua-stack3', 'floor: bare EVALSHA of the decide script, 3 tiers', 'floor', bareScript(backend, stackTiers)),
    on('floor-log', 'floor: minimal sliding-log Lua, one call per decision', 'floor', slidingLog(backend, false)),
    on('floor-log-batch', 'floor: minimal sliding-log Lua, batched', 'floor', slidingLog(backend, true)),
    on('floor-ping', 'floor: one PING per decision', 'floor', (_rules, _namespace, clients) => {
      const redis = wire(backend, clients);
      return { decide: async () => (await redis.ping(), false) };
    }),
  ];
}

function flexible(limiter: RateLimiterAbstract): Instance {
  const blocked = (reason: unknown): boolean => {
    if (reason instanceof RateLimiterRes) return true;
    throw reason instanceof Error ? reason : new Error(String(reason));
  };
  return { decide: (id) => limiter.consume(id).then(() => false, blocked) };
}

export const CONTENDERS: readonly Contender[] = [
  ...redisContenders('ioredis'),
  // The same floor twice: two identical contenders differ only by the machine's noise.
  {
    ...redisContenders('ioredis').find((c) => c.id === 'floor-lua@ioredis')!,
    id: 'control-floor-lua@ioredis',
    label: 'control: the bare EVALSHA floor again, ioredis',
  },
  ...redisContenders('node-redis5'),
  {
    id: 'lib-memory',
    label: 'this lib, in-memory store',
    family: 'library',
    backend: 'memory',
    create: (rules) => {
      const limiter = new RollingRateLimiter(rules);
      return { decide: (id) => limiter.limit(id) };
    },
  },
  {
    id: 'rrl-memory',
    label: 'rolling-rate-limiter 0.4.2, in memory',
    family: 'peer',
    backend: 'memory',
    create: (rules) => {
      const limiter = new InMemoryRateLimiter(rules);
      return {
        decide: (id) => limiter.limit(id),
        // It keeps one live timer per id, which would hold the process for `interval`.
        dispose: () => Object.values(limiter.ttls).forEach((timer) => clearTimeout(timer)),
      };
    },
  },
  {
    id: 'rlf-memory',
    label: 'rate-limiter-flexible 11.4, in memory (fixed window)',
    family: 'peer',
    backend: 'memory',
    create: (rules, namespace) =>
      flexible(new RateLimiterMemory({ keyPrefix: namespace, points: rules.maxInInterval, duration: Math.round(rules.interval / 1000) })),
  },
];

export function contender(id: string): Contender {
  const found = CONTENDERS.find((c) => c.id === id);
  if (found === undefined) throw new TypeError(`unknown contender: ${id}`);
  return found;
}

/** One connection per client library, both connected. */
export async function openClients(url: string): Promise<Clients> {
  const clients: Clients = { ioredis: new Redis(url), nodeRedis: createClient({ url }) };
  await clients.nodeRedis.connect();
  return clients;
}

export function closeClients({ ioredis, nodeRedis }: Clients): void {
  ioredis.disconnect();
  nodeRedis.destroy();
}
