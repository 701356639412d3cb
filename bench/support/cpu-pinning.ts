// The throughput phase runs as a deployment with Redis on a host of its own
// would: the contenders' client processes on one core, redis-server on
// another, so that neither takes CPU from the other and a contender's client
// work shows as client CPU, not as Redis time. Linux `taskset` (util-linux)
// pins every thread of a process; without it, or on one core, nothing is
// pinned and the report says so.

import { spawnSync } from 'node:child_process';
import os from 'node:os';

/** The cores the clients and the server run on, or undefined when they cannot be pinned apart. */
export interface Pinning {
  readonly clients: string;
  readonly server: string;
}

function plan(): Pinning | undefined {
  if (process.env.BENCH_NO_PINNING !== undefined || os.availableParallelism() < 2) return undefined;
  const probe = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  return probe.status === 0 ? { clients: '0', server: '1' } : undefined;
}

/** How this run pins processes (set `BENCH_NO_PINNING` to share the cores as before). */
export const PINNING = plan();

/** Pins every thread of `pid` to `cores` (a taskset list); does nothing when nothing is pinned. */
export function pin(pid: number | undefined, cores: string | undefined): void {
  if (pid === undefined || cores === undefined) return;
  const result = spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`taskset could not pin process ${pid} to cores ${cores}`);
}

/** The line of the report that says how the run was pinned. */
export function describePinning(): string {
  return PINNING === undefined
    ? 'processes not pinned: the contenders share the cores with redis-server'
    : `contenders' client processes pinned to core ${PINNING.clients}, redis-server to core ${PINNING.server} (taskset), as with Redis on a host of its own`;
}
