// The machine and software a run measured, printed at the start and stored
// with the results: CPUs, memory, Node, Redis, and the exact client and peer
// versions installed.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly redis: string;
  readonly loadAverageAtStart: readonly number[];
  readonly packages: Readonly<Record<string, string>>;
  /** The library's source measured: git HEAD, and how many files under src/ differ from it. */
  readonly source: string;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function versionAt(relativePath: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(`${ROOT}${relativePath}`, 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

function packageVersion(name: string, ...paths: string[]): string {
  for (const path of [...paths, `node_modules/${name}/package.json`]) {
    const version = versionAt(path);
    if (version !== undefined) return version;
  }
  return 'not installed';
}

function sourceState(): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
    return `git ${git('rev-parse', '--short', 'HEAD')}${dirty === 0 ? '' : ` with ${dirty} uncommitted file(s) under src/`}`;
  } catch {
    return 'unknown (no git)';
  }
}

/** Describes this machine; `redis` is the server version read from INFO. */
export function describeMachine(redis: string): Machine {
  return {
    nproc: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis,
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
    packages: {
      'rolling-window-limiter (this)': packageVersion('rolling-window-limiter', 'package.json'),
      ioredis: packageVersion('ioredis'),
      'redis (node-redis, as redis5)': packageVersion('redis5'),
      '@redis/client (of redis5)': packageVersion('@redis/client', 'node_modules/redis5/node_modules/@redis/client/package.json'),
      'rolling-rate-limiter': packageVersion('rolling-rate-limiter'),
      'rate-limiter-flexible': packageVersion('rate-limiter-flexible'),
      tsx: packageVersion('tsx'),
    },
    source: sourceState(),
  };
}

/** One line per fact, for the terminal and the markdown report. */
export function machineLines(machine: Machine): string[] {
  return [
    `CPUs: ${machine.nproc} × ${machine.cpuModel}`,
    `memory: ${machine.memoryGiB} GiB; OS: ${machine.os}; load average at start: ${machine.loadAverageAtStart.join(', ')}`,
    `Node ${machine.node}; Redis ${machine.redis} (one redis-server on 127.0.0.1, no persistence)`,
    `library measured: its build in dist/ (CommonJS, one copy per contender), compiled from ${machine.source}`,
    `packages: ${Object.entries(machine.packages)
      .map(([name, version]) => `${name} ${version}`)
      .join('; ')}`,
  ];
}
