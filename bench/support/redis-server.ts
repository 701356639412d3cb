// The bench's own redis-server: loopback only, a free port, no persistence,
// stopped by its PID (also when the bench process exits without stopping it).

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  readonly url: string;
  readonly pid: number;
  /** SIGTERM, SIGKILL after 3 s; resolves once the process has exited. Safe to call twice. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Resolves once the server says it is ready; rejects with its output if it exits or stays silent for 30 s. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (why: string): void => reject(new Error(`redis-server ${why}:\n${output}`));
    const timer = setTimeout(() => fail('did not get ready within 30 s'), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => fail(`could not start (${error.message}); install it (apt-get install redis-server, brew install redis)`));
    child.once('exit', (code) => fail(`exited early (code ${code})`));
  });
}

/**
 * Starts redis-server on a free 127.0.0.1 port, trying another port if the chosen one is taken meanwhile; `under`
 * is a command to run it under (`['valgrind', '--tool=callgrind', ...]`), which must pass its signals on.
 */
export async function startRedisServer(under: readonly string[] = []): Promise<RedisServer> {
  // A directory of its own: a dump.rdb left where the bench runs would be loaded at start, and one written by a
  // replica holds a replication offset, which makes Redis keep a backlog and copy every write of a script for it
  // (about 5% more instructions per decision).
  const dir = mkdtempSync(join(tmpdir(), 'rrl-bench-redis-'));
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
    const child = spawn(under[0] ?? 'redis-server', under.length > 0 ? [...under.slice(1), 'redis-server', ...args] : args, {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const killOnExit = (): void => void child.kill('SIGKILL');
    process.once('exit', killOnExit);
    try {
      await ready(child);
    } catch (error) {
      child.kill('SIGKILL');
      process.off('exit', killOnExit);
      if (attempt < 5 && error instanceof Error && /address already in use/i.test(error.message)) continue;
      removeDir();
      throw error;
    }
    void exited.then(() => process.off('exit', killOnExit));
    let stopping: Promise<void> | undefined;
    return {
      url: `redis://127.0.0.1:${port}`,
      pid: child.pid as number,
      stop: () =>
        (stopping ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
          await exited;
          clearTimeout(timer);
          removeDir();
        })()),
    };
  }
}
