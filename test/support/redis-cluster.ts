// Starts a real Redis Cluster for tests: N master `redis-server` processes
// (default 3; optionally with replicas, for failover tests) started through startRedisServer, so they are
// stopped by PID and killed by its exit hook like every other test server,
// joined with `redis-cli --cluster create`, and waited for until every node
// reports `cluster_state:ok` with all 16384 slots assigned and the same slot
// map. `useRedisCluster()` is what test files call: it uses REDIS_CLUSTER_URLS
// when the user brings a cluster, or starts one here.
//
// Cluster bus ports: by default a node's bus port is its port + 10000, which
// fails for ports above 55535 (a fifth of Linux's ephemeral range) and is never
// checked by the port probe. Each node is therefore given its own bus port with
// `--cluster-port`, probed free like the client port; a node that cannot bind
// either port is started again on new ones.
//
// A Valkey Cluster the same way: `startRedisCluster({ binary: 'valkey-server' })`
// starts valkey-server nodes and joins them with valkey-cli; `useValkeyCluster()`
// is `useRedisCluster()` for Valkey (VALKEY_CLUSTER_URLS, or a cluster started here).
//
// Also here: `keySlot` (the slot Redis computes for a key) and `slotOwners`
// (which master serves which slots), for tests that need to know where a key lives.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { findFreeLoopbackPort } from './free-port.js';
import { startRedisServer, type RedisServer, type ServerBinary } from './redis-server.js';

/** Number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

/** One node of a cluster, as clients address it. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
  /** PID of the node's redis-server when this module started it (it changes on restart); undefined for a user's cluster. */
  readonly pid: number | undefined;
}

/** A running Redis Cluster, started here or brought by the user. */
export interface RedisClusterHandle {
  /** Every node started here (masters and replicas), or the nodes listed in REDIS_CLUSTER_URLS. */
  readonly nodes: readonly ClusterNode[];
  /** Seed nodes for cluster clients, e.g. `new Cluster(handle.rootNodes)` (ioredis). */
  readonly rootNodes: readonly { readonly host: string; readonly port: number }[];
  /** The same nodes as `redis://host:port` URLs (as given, credentials included, for a user's cluster). */
  readonly urls: readonly string[];
  /** The redis-server processes started here, for fault-injection tests (pause, restart); empty for a user's cluster. */
  readonly servers: readonly RedisServer[];
  /** Stops every node started here by PID and removes their files; safe to call twice; does nothing for a user's cluster. */
  stop(): Promise<void>;
}

/** Options for {@link startRedisCluster}. */
export interface StartRedisClusterOptions {
  /** Number of masters, at least 3 (what `redis-cli --cluster create` accepts). @default 3 */
  masters?: number;
  /** Replicas of each master, 0 to 2; `redis-cli` picks which master each replica follows. @default 0 */
  replicasPerMaster?: number;
  /** `cluster-node-timeout`: how long a node may be unreachable before the others fail it over. @default 2000 */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage`: with `true` (Redis's default) every master
   * refuses commands (CLUSTERDOWN) while any slot is unserved, e.g. from the
   * moment a master is marked failed until its replica is promoted; with
   * `false` the healthy masters keep serving their slots. @default true
   */
  requireFullCoverage?: boolean;
  /** The nodes' server: `redis-server` (default, joined with redis-cli) or `valkey-server` (joined with valkey-cli). */
  binary?: ServerBinary;
}

/** A contiguous range of slots and the master that serves it. */
export interface SlotRange {
  readonly start: number;
  readonly end: number;
  readonly master: { readonly host: string; readonly port: number; readonly id: string };
}

/** Message of the error thrown when redis-cli cannot be found on PATH. */
export const REDIS_CLI_MISSING_MESSAGE = [
  'redis-cli is not installed (not found on PATH), and the Redis Cluster tests need it to create the cluster.',
  'It comes with the Redis server packages:',
  '  Debian/Ubuntu: sudo apt-get install redis-tools   (also installed by `apt-get install redis-server`)',
  '  macOS:         brew install redis',
  'or set REDIS_CLUSTER_URLS=redis://127.0.0.1:7000,redis://127.0.0.1:7001 to use a cluster you run (the tests write and delete keys there).',
].join('\n');

/** Message of the error thrown when valkey-cli cannot be found on PATH. */
export const VALKEY_CLI_MISSING_MESSAGE = [
  'valkey-cli is not installed (not found on PATH), and the Valkey Cluster tests need it to create the cluster.',
  'It comes with valkey-server (Debian: valkey-tools, a dependency of valkey-server; `npm test` installs both as root on Debian).',
  'Or set VALKEY_CLUSTER_URLS=redis://127.0.0.1:7000,redis://127.0.0.1:7001 to use a Valkey cluster you run (the tests write and delete keys there).',
].join('\n');

/** The command-line tool that creates a cluster of each server, and the message when it is missing. */
const CLUSTER_CLIS: Readonly<Record<ServerBinary, { cli: string; missing: string }>> = {
  'redis-server': { cli: 'redis-cli', missing: REDIS_CLI_MISSING_MESSAGE },
  'valkey-server': { cli: 'valkey-cli', missing: VALKEY_CLI_MISSING_MESSAGE },
};

const DEFAULT_MASTERS = 3;
const MAX_MASTERS = 16;
const NODE_TIMEOUT_MS = 2_000;
const NODE_START_ATTEMPTS = 5;
const CREATE_TIMEOUT_MS = 30_000;
const READY_TIMEOUT_MS = 15_000;
const READY_POLL_INTERVAL_MS = 50;
const ADMIN_COMMAND_TIMEOUT_MS = 2_000;
const KEPT_OUTPUT_CHARS = 16_000;

/** Temporary directories of clusters not yet stopped; removed if the test process exits first. */
const liveTempDirs = new Set<string>();
process.on('exit', () => {
  // redis-server.ts's own exit hook SIGKILLs the nodes (they were started through it).
  for (const dir of liveTempDirs) rmSync(dir, { recursive: true, force: true });
});

/** CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster hashes keys with. */
function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * The slot Redis Cluster assigns to `key` (a string is taken as UTF-8): the
 * CRC16 of the hash tag, which is what lies between the first `{` and the
 * first `}` after it when that is not empty, or of the whole key otherwise,
 * modulo 16384.
 */
export function keySlot(key: string | Uint8Array): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(0x7b); // '{'
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) return crc16Xmodem(bytes.subarray(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16Xmodem(bytes) % CLUSTER_SLOTS;
}

/** The master of `slot` in `ranges`, as `host:port`; throws if no range covers it. */
export function masterOfSlot(ranges: readonly SlotRange[], slot: number): string {
  const range = ranges.find((candidate) => candidate.start <= slot && slot <= candidate.end);
  if (range === undefined) throw new Error(`slot ${slot} is not served by any master`);
  return `${range.master.host}:${range.master.port}`;
}

/** Parses a `CLUSTER SLOTS` reply into ranges sorted by first slot. */
function parseClusterSlots(reply: unknown): SlotRange[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected CLUSTER SLOTS reply: ${JSON.stringify(reply)}`);
  const ranges = reply.map((entry: unknown): SlotRange => {
    const [start, end, master] = Array.isArray(entry) ? (entry as unknown[]) : [];
    const [host, port, id] = Array.isArray(master) ? (master as unknown[]) : [];
    if (typeof start !== 'number' || typeof end !== 'number' || typeof host !== 'string' || typeof port !== 'number') {
      throw new Error(`unexpected CLUSTER SLOTS entry: ${JSON.stringify(entry)}`);
    }
    return { start, end, master: { host, port, id: typeof id === 'string' ? id : '' } };
  });
  return ranges.sort((a, b) => a.start - b.start);
}

/** A short-lived admin connection to one node that fails fast instead of retrying. */
function adminConnection(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: ADMIN_COMMAND_TIMEOUT_MS,
    commandTimeout: ADMIN_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {}); // a node that is down (a failover test killed it) is reported by the command's rejection
  return redis;
}

async function withAdminConnection<T>(url: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = adminConnection(url);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** Which master serves which slots, from `CLUSTER SLOTS` on the first node of `handle` that answers. */
export async function slotOwners(handle: Pick<RedisClusterHandle, 'urls'>): Promise<SlotRange[]> {
  const errors: unknown[] = [];
  for (const url of handle.urls) {
    try {
      return parseClusterSlots(await withAdminConnection(url, (redis) => redis.call('CLUSTER', 'SLOTS')));
    } catch (error) {
      errors.push(error);
    }
  }
  throw new AggregateError(errors, `no node of the cluster answered CLUSTER SLOTS (${handle.urls.join(', ')})`);
}

/** Fails with {@link REDIS_CLI_MISSING_MESSAGE} (or Valkey's) when the cluster's CLI is not on PATH. */
async function checkRedisCliInstalled(binary: ServerBinary): Promise<void> {
  const result = await runRedisCli(binary, ['--version'], 5_000);
  if (result.code !== 0) throw new Error(`${CLUSTER_CLIS[binary].cli} --version failed (code ${result.code}):\n${result.output}`);
}

/** Runs redis-cli (valkey-cli for Valkey) with `args`, SIGKILLing it after `timeoutMs`; resolves with its exit code and output. */
async function runRedisCli(binary: ServerBinary, args: readonly string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const { cli, missing } = CLUSTER_CLIS[binary];
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('exit', (code, signal) => resolve([code, signal]));
  });
  try {
    await once(child, 'spawn');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(missing, { cause: error });
    throw error;
  }
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code, signal] = await exited;
    if (signal === 'SIGKILL' && code === null) output += `\n(${cli} killed after ${timeoutMs} ms)`;
    return { code, output };
  } finally {
    clearTimeout(timer);
    process.off('exit', killOnExit);
  }
}

/** Starts one cluster-enabled node with its own probed-free bus port; retries on new ports if a port was taken. */
async function startClusterNode(
  dir: string,
  index: number,
  nodeTimeoutMs: number,
  requireFullCoverage: boolean,
  binary: ServerBinary = 'redis-server',
): Promise<RedisServer> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= NODE_START_ATTEMPTS; attempt++) {
    const busPort = await findFreeLoopbackPort();
    try {
      return await startRedisServer({
        binary,
        extraArgs: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${index}-${attempt}.conf`),
          '--cluster-port',
          String(busPort),
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--cluster-require-full-coverage',
          requireFullCoverage ? 'yes' : 'no',
          '--dir',
          dir,
        ],
      });
    } catch (error) {
      // The bus port (or, after startRedisServer's own retries, the client port) was taken meanwhile.
      if (!/address already in use/i.test(String(error))) throw error;
      lastError = error;
    }
  }
  throw new Error(`a cluster node could not bind free ports in ${NODE_START_ATTEMPTS} attempts`, { cause: lastError });
}

/** Parses `CLUSTER INFO` text into its fields. */
function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** Why the node at `url` is not ready yet (state, slots, known nodes, slot map), or undefined when it is. */
async function notReadyReason(url: string, nodes: number, masters: number): Promise<{ reason: string | undefined; slotMap: string }> {
  return withAdminConnection(url, async (redis) => {
    const info = parseInfo(String(await redis.call('CLUSTER', 'INFO')));
    const slotMap = JSON.stringify(parseClusterSlots(await redis.call('CLUSTER', 'SLOTS')));
    const expected: [string, string][] = [
      ['cluster_state', 'ok'],
      ['cluster_slots_assigned', String(CLUSTER_SLOTS)],
      ['cluster_slots_ok', String(CLUSTER_SLOTS)],
      ['cluster_known_nodes', String(nodes)],
      ['cluster_size', String(masters)],
    ];
    const wrong = expected.filter(([field, value]) => info.get(field) !== value);
    const role = (await redis.call('ROLE')) as unknown[];
    if ((role[0] === 'slave' || role[0] === 'replica') && role[3] !== 'connected') wrong.push(['replication', 'connected']);
    const reason = wrong.length === 0 ? undefined : wrong.map(([field]) => `${field}:${info.get(field) ?? '?'}`).join(' ');
    return { reason, slotMap };
  });
}

/** Polls every node until all are ready and agree on the slot map, for at most READY_TIMEOUT_MS. */
async function waitUntilClusterReady(urls: readonly string[], masters: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const maxPolls = Math.ceil(READY_TIMEOUT_MS / READY_POLL_INTERVAL_MS);
  let lastState = 'not polled';
  for (let poll = 0; poll < maxPolls && Date.now() < deadline; poll++) {
    try {
      const states = await Promise.all(urls.map((url) => notReadyReason(url, urls.length, masters)));
      const notReady = states.flatMap((state, i) => (state.reason === undefined ? [] : [`${urls[i]}: ${state.reason}`]));
      const agree = states.every((state) => state.slotMap === states[0]?.slotMap);
      if (notReady.length === 0 && agree) return;
      lastState = notReady.length > 0 ? notReady.join('; ') : 'the nodes disagree about the slot map';
    } catch (error) {
      lastState = String(error);
    }
    await delay(READY_POLL_INTERVAL_MS);
  }
  throw new Error(`the Redis Cluster was not ready within ${READY_TIMEOUT_MS} ms: ${lastState}`);
}

function hostPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`REDIS_CLUSTER_URLS / VALKEY_CLUSTER_URLS: expected redis:// or rediss:// URLs, got ${url}`);
  }
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port === '' ? 6379 : Number(parsed.port) };
}

/**
 * Starts a Redis Cluster of `masters` masters (default 3) with
 * `replicasPerMaster` replicas each (default 0) on 127.0.0.1 and resolves
 * once every node says `cluster_state:ok`, sees all 16384 slots assigned and
 * every node, reports the same slot map, and every replica is in sync. Throws (never skips) if
 * redis-server or redis-cli is missing, a node does not start, creating the
 * cluster fails, or it is not ready within 15 s; it stops what it started first.
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = options.masters ?? DEFAULT_MASTERS;
  if (!Number.isInteger(masters) || masters < DEFAULT_MASTERS || masters > MAX_MASTERS) {
    throw new RangeError(`masters must be an integer from ${DEFAULT_MASTERS} to ${MAX_MASTERS}, got ${masters}`);
  }
  const replicas = options.replicasPerMaster ?? 0;
  if (!Number.isInteger(replicas) || replicas < 0 || replicas > 2) throw new RangeError(`replicasPerMaster must be 0, 1 or 2, got ${replicas}`);
  const nodeTimeoutMs = options.nodeTimeoutMs ?? NODE_TIMEOUT_MS;
  const binary = options.binary ?? 'redis-server';
  await checkRedisCliInstalled(binary);

  const dir = await mkdtemp(join(tmpdir(), 'rwl-redis-cluster-'));
  liveTempDirs.add(dir);
  const started: RedisServer[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const results = await Promise.allSettled(started.map((server) => server.stop()));
      await rm(dir, { recursive: true, force: true });
      liveTempDirs.delete(dir);
      const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failure) throw failure.reason;
    })();
    return stopping;
  };

  try {
    const outcomes = await Promise.allSettled(
      Array.from({ length: masters * (1 + replicas) }, (_, i) => startClusterNode(dir, i, nodeTimeoutMs, options.requireFullCoverage ?? true, binary)),
    );
    for (const outcome of outcomes) if (outcome.status === 'fulfilled') started.push(outcome.value);
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure) throw failure.reason;

    const addresses = started.map((server) => `${server.host}:${server.port}`);
    const created = await runRedisCli(
      binary,
      ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'],
      CREATE_TIMEOUT_MS,
    );
    if (created.code !== 0) {
      throw new Error(`${CLUSTER_CLIS[binary].cli} --cluster create ${addresses.join(' ')} failed (code ${created.code}):\n${created.output}`);
    }
    await waitUntilClusterReady(
      started.map((server) => server.url),
      masters,
    );
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  return {
    nodes: started.map((server) => ({
      host: server.host,
      port: server.port,
      get pid() {
        return server.pid;
      },
    })),
    rootNodes: started.map((server) => ({ host: server.host, port: server.port })),
    urls: started.map((server) => server.url),
    servers: started,
    stop,
  };
}

/**
 * The Redis Cluster a test file should use: the one listed in
 * REDIS_CLUSTER_URLS (comma-separated redis:// URLs of some of its nodes; its
 * stop() does nothing) if set, otherwise a 3-master cluster started with
 * {@link startRedisCluster}. Call it in a mocha `before` (it takes a few
 * seconds) and call `stop()` in `after`.
 */
export async function useRedisCluster(): Promise<RedisClusterHandle> {
  return useCluster(process.env.REDIS_CLUSTER_URLS, 'redis-server');
}

/**
 * The Valkey Cluster a test file should use: the one listed in
 * VALKEY_CLUSTER_URLS (as REDIS_CLUSTER_URLS) if set, otherwise a 3-master
 * cluster of valkey-server nodes started with {@link startRedisCluster}.
 */
export async function useValkeyCluster(): Promise<RedisClusterHandle> {
  return useCluster(process.env.VALKEY_CLUSTER_URLS, 'valkey-server');
}

/** The cluster of `external` (comma-separated URLs), or one of `binary` started here. */
async function useCluster(external: string | undefined, binary: ServerBinary): Promise<RedisClusterHandle> {
  if (external === undefined || external.trim() === '') return startRedisCluster({ binary });
  const urls = external
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  const rootNodes = urls.map(hostPort);
  return {
    nodes: rootNodes.map((node) => ({ ...node, pid: undefined })),
    rootNodes,
    urls,
    servers: [],
    stop: async () => {},
  };
}

/**
 * Moves `slots` slots from the master `from` to the master `to` (node ids) as
 * an operator does, with `redis-cli --cluster reshard` (keys moved `pipeline`
 * at a time); resolves with its output, and rejects when it fails.
 */
export async function reshardWithRedisCli(
  handle: Pick<RedisClusterHandle, 'rootNodes'>,
  move: { readonly from: string; readonly to: string; readonly slots: number; readonly pipeline?: number },
  timeoutMs = 300_000,
): Promise<string> {
  const seed = handle.rootNodes[0];
  if (seed === undefined) throw new Error('no node to reshard through');
  const args = ['--cluster', 'reshard', `${seed.host}:${seed.port}`, '--cluster-from', move.from, '--cluster-to', move.to];
  args.push('--cluster-slots', String(move.slots), '--cluster-pipeline', String(move.pipeline ?? 10), '--cluster-yes');
  const { code, output } = await runRedisCli('redis-server', args, timeoutMs);
  if (code !== 0) throw new Error(`redis-cli --cluster reshard failed (code ${code}):\n${output}`);
  return output;
}
