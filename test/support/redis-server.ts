// Starts real `redis-server` processes on free 127.0.0.1 ports for tests, and
// stops exactly those processes again (by their PID), also when a test run ends
// without stopping them. `useRedis()` is what test files call: it uses
// REDIS_URL when the user brings a server, or starts one here.
//
// Valkey the same way: `startRedisServer({ binary: 'valkey-server' })` starts
// valkey-server (8.x: it takes redis-server's arguments), and `useValkey()` is
// `useRedis()` for Valkey (VALKEY_URL, or a valkey-server started here).
//
// A Redis Cluster launcher can live next to this module and build on
// startRedisServer: each node is a server started with extraArgs such as
// `--cluster-enabled yes --cluster-config-file <file> --dir <tmpdir>`. A node
// whose cluster bus port (port + 10000) is taken exits with "Address already in
// use", which startRedisServer already answers by retrying on another port.
//
// test/support/redis-cluster.ts is that launcher (startRedisCluster,
// useRedisCluster): its nodes are started here, so stop() and the exit hook
// below cover them. It passes `--cluster-port` with a probed-free port,
// because the default port + 10000 fails for ports above 55535 with an error
// that is not retried here.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { findFreeLoopbackPort, LOOPBACK_HOST } from './free-port.js';
import { answersPing } from './resp-ping.js';

/** A redis-server process started by this module, bound to 127.0.0.1. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** PID of the current process; changes on restart(). */
  readonly pid: number | undefined;
  /** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: no shutdown, no goodbye to clients or the cluster; resolves once the process has exited. */
  kill(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections are accepted by the kernel but never answered. */
  pause(): void;
  /** Unfreezes a paused process (SIGCONT). */
  resume(): void;
  /** Stops the process and starts a new one on the same port with the same arguments. */
  restart(): Promise<void>;
}

/** Options for {@link startRedisServer}. */
export interface StartRedisServerOptions {
  /** Arguments appended to the defaults, e.g. `['--maxmemory', '10mb']`. */
  extraArgs?: string[];
  /** A configuration file, given before every argument (a sentinel needs one it can rewrite). */
  configFile?: string;
  /** The server to start: `redis-server` (default) or `valkey-server`, found on PATH. */
  binary?: ServerBinary;
}

/** The servers this module starts. */
export type ServerBinary = 'redis-server' | 'valkey-server';

/** What a test file needs from a Redis server, wherever it comes from. */
export interface UsedRedis {
  url: string;
  stop(): Promise<void>;
}

/** Message of the error thrown when redis-server cannot be found on PATH. */
export const REDIS_SERVER_MISSING_MESSAGE = [
  'redis-server is not installed (not found on PATH), and the Redis tests need a real server.',
  '`npm test` installs it by itself on Debian/Ubuntu when run as root; otherwise install it:',
  '  Debian/Ubuntu: sudo apt-get install redis-server',
  '  macOS:         brew install redis',
  'or set REDIS_URL=redis://127.0.0.1:6379 to use a server you run (the tests write and delete keys there).',
].join('\n');

/** Message of the error thrown when valkey-server cannot be found on PATH. */
export const VALKEY_SERVER_MISSING_MESSAGE = [
  'valkey-server is not installed (not found on PATH), and the Valkey tests need a real Valkey 8 server.',
  "`npm test` installs it by itself on Debian when run as root (scripts/ensure-valkey-server.mjs, from Debian 12's bookworm-backports);",
  '`node scripts/ensure-valkey-server.mjs` prints the exact commands for this machine otherwise. macOS: brew install valkey.',
  'Or set VALKEY_URL=redis://127.0.0.1:6380 to use a Valkey server you run (the tests write and delete keys there).',
].join('\n');

const MISSING_MESSAGES: Readonly<Record<ServerBinary, string>> = {
  'redis-server': REDIS_SERVER_MISSING_MESSAGE,
  'valkey-server': VALKEY_SERVER_MISSING_MESSAGE,
};

// A server loading an append-only file on a loaded machine has taken 7 s to answer; a dead one exits, and is caught at once.
const READY_TIMEOUT_MS = 20_000;
const READY_POLL_INTERVAL_MS = 25;
const READY_PING_TIMEOUT_MS = 250;
const STOP_GRACE_MS = 3_000;
const KILL_WAIT_MS = 5_000;
const PORT_ATTEMPTS = 5;
const KEPT_OUTPUT_CHARS = 16_000;

/** Children started here and not yet exited; SIGKILLed if the test process exits first. */
const runningChildren = new Set<ChildProcess>();
/** The working directories made for servers here, removed when the test process exits. */
const workingDirs: string[] = [];
process.on('exit', () => {
  for (const child of runningChildren) child.kill('SIGKILL');
  for (const dir of workingDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh working directory for one server (kept across its restarts). Without one, a server writes into the test
 * process's directory (a replica saves the RDB of its full sync there as dump.rdb), and every server started later
 * there loads it at start: its keys, and its replication offset, which makes Redis keep a replication backlog and
 * copy every write of a script for it.
 */
function freshWorkingDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-redis-'));
  workingDirs.push(dir);
  return dir;
}

/** A spawned redis-server (or valkey-server) with its exit promise and the tail of its stdout/stderr. */
interface LaunchedProcess {
  binary: ServerBinary;
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

/** Raised when redis-server exits because its port was taken between probe and bind. */
class PortTakenError extends Error {}

/** The redis-server command line: loopback only, no persistence, in the foreground. */
export function redisServerArgs(port: number, extraArgs: readonly string[] = []): string[] {
  return ['--port', String(port), '--bind', LOOPBACK_HOST, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'yes', ...extraArgs];
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function captureOutput(child: ChildProcess): () => string {
  let kept = '';
  const keep = (chunk: Buffer): void => {
    kept = (kept + chunk.toString('utf8')).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => kept;
}

/** Resolves true if `promise` settles within `ms`, false otherwise. */
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function spawnRedisServer(binary: ServerBinary, args: readonly string[]): Promise<LaunchedProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureOutput(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await once(child, 'spawn');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(MISSING_MESSAGES[binary], { cause: error });
    throw error;
  }
  runningChildren.add(child);
  void exited.then(() => runningChildren.delete(child));
  return { binary, child, exited, output };
}

/** Stops the process: SIGTERM (after SIGCONT, in case it is paused), SIGKILL after the grace period. */
async function terminate({ binary, child, exited }: LaunchedProcess): Promise<void> {
  if (!hasExited(child)) {
    child.kill('SIGCONT'); // a stopped process would not act on SIGTERM until continued
    child.kill('SIGTERM');
    if (!(await settlesWithin(exited, STOP_GRACE_MS))) child.kill('SIGKILL');
  }
  if (!(await settlesWithin(exited, KILL_WAIT_MS))) {
    throw new Error(`${binary} (pid ${child.pid}) did not exit after SIGKILL`);
  }
}

async function earlyExitError(launched: LaunchedProcess, port: number): Promise<Error> {
  await delay(50); // let the last of its output arrive
  const { exitCode, signalCode } = launched.child;
  const output = launched.output();
  const message = `${launched.binary} on port ${port} exited early (code ${exitCode}, signal ${signalCode}):\n${output}`;
  return /address already in use/i.test(output) ? new PortTakenError(message) : new Error(message);
}

/** Polls PING until the server answers, it exits, or READY_TIMEOUT_MS passes. */
async function waitUntilReady(launched: LaunchedProcess, port: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const maxPolls = Math.ceil(READY_TIMEOUT_MS / READY_POLL_INTERVAL_MS);
  for (let poll = 0; poll < maxPolls && Date.now() < deadline; poll++) {
    if (hasExited(launched.child)) throw await earlyExitError(launched, port);
    if (await answersPing(LOOPBACK_HOST, port, READY_PING_TIMEOUT_MS)) return;
    await delay(READY_POLL_INTERVAL_MS);
  }
  await terminate(launched);
  throw new Error(`${launched.binary} on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms:\n${launched.output()}`);
}

async function launchUntilReady(binary: ServerBinary, port: number, args: readonly string[]): Promise<LaunchedProcess> {
  const launched = await spawnRedisServer(binary, args);
  await waitUntilReady(launched, port);
  return launched;
}

class LocalRedisServer implements RedisServer {
  readonly host = LOOPBACK_HOST;
  readonly url: string;

  constructor(
    readonly port: number,
    private readonly args: readonly string[],
    private launched: LaunchedProcess,
  ) {
    this.url = `redis://${this.host}:${port}`;
  }

  get pid(): number | undefined {
    return this.launched.child.pid;
  }

  stop(): Promise<void> {
    return terminate(this.launched);
  }

  async kill(): Promise<void> {
    if (hasExited(this.launched.child)) return;
    this.launched.child.kill('SIGKILL');
    if (!(await settlesWithin(this.launched.exited, KILL_WAIT_MS))) throw new Error(`${this.launched.binary} (pid ${this.pid}) did not exit after SIGKILL`);
  }

  pause(): void {
    this.signalRunning('SIGSTOP');
  }

  resume(): void {
    this.signalRunning('SIGCONT');
  }

  async restart(): Promise<void> {
    await this.stop();
    this.launched = await launchUntilReady(this.launched.binary, this.port, this.args);
  }

  private signalRunning(signal: NodeJS.Signals): void {
    if (hasExited(this.launched.child)) throw new Error(`${this.launched.binary} on port ${this.port} is not running`);
    this.launched.child.kill(signal);
  }
}

/**
 * Starts `redis-server` (or `options.binary`) on a free 127.0.0.1 port and resolves once it answers
 * PING. Retries on another port if the chosen one gets taken before the bind.
 * Throws (never skips) if the server is not installed, exits early, or does
 * not answer within 5 s; the error includes the server's output.
 */
export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  let dir: string | undefined;
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    const port = await findFreeLoopbackPort();
    const extraArgs = options.extraArgs ?? [];
    const dirArgs = extraArgs.includes('--dir') ? [] : ['--dir', (dir ??= freshWorkingDir())];
    const args = [...(options.configFile === undefined ? [] : [options.configFile]), ...redisServerArgs(port, [...dirArgs, ...extraArgs])];
    try {
      return new LocalRedisServer(port, args, await launchUntilReady(binary, port, args));
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
  throw new Error(`${binary} could not bind a free port in ${PORT_ATTEMPTS} attempts`);
}

/**
 * The Redis server a test file should use: REDIS_URL if set (its stop() does
 * nothing), otherwise a server started with {@link startRedisServer}. Call it in
 * a mocha `before` and call `stop()` in `after`.
 */
export async function useRedis(): Promise<UsedRedis> {
  const externalUrl = process.env.REDIS_URL;
  if (externalUrl) return { url: externalUrl, stop: async () => {} };
  const server = await startRedisServer();
  return { url: server.url, stop: () => server.stop() };
}

/**
 * The Valkey server a test file should use: VALKEY_URL if set (its stop() does
 * nothing), otherwise a valkey-server started with {@link startRedisServer}.
 * Call it in a mocha `before` and call `stop()` in `after`.
 */
export async function useValkey(): Promise<UsedRedis> {
  const externalUrl = process.env.VALKEY_URL;
  if (externalUrl) return { url: externalUrl, stop: async () => {} };
  const server = await startRedisServer({ binary: 'valkey-server' });
  return { url: server.url, stop: () => server.stop() };
}
