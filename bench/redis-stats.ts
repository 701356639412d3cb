// What the Redis server itself spent on a measurement, read from INFO on a
// separate admin connection: CONFIG RESETSTAT before, then INFO commandstats,
// stats and cpu after.
//
// Commands run inside MULTI/EXEC or a script are counted twice in their time:
// once on their own line and again inside EXEC's or EVALSHA's. So besides the
// plain sum over all commands, `usecTopLevel` sums only the commands a client
// sent (MULTI, EXEC, EVAL, EVALSHA when present). The admin's own CONFIG and
// INFO are left out. PING is counted: it is the PING floor's decision (no
// connection of the bench pings on its own).

import type { Redis } from 'ioredis';

/** Commands that contain others: their time includes their nested commands'. */
const CONTAINERS = new Set(['multi', 'exec', 'eval', 'evalsha', 'eval_ro', 'evalsha_ro']);
const ADMIN = /^(config|info|flushdb|flushall|memory|script|slowlog|dbsize|client|hello|select|command)/;

export interface CommandCost {
  readonly calls: number;
  readonly usec: number;
}

/** Server-side totals over one measurement window. */
export interface ServerCost {
  /** Commands executed, nested ones included (each command inside MULTI or a script counts). */
  readonly calls: number;
  /** Sum of `usec` over all commands, as INFO gives it (nested time counted twice). */
  readonly usecAll: number;
  /** Sum of `usec` over the commands clients sent: no double counting. */
  readonly usecTopLevel: number;
  /** total_net_output_bytes delta: bytes the server wrote to clients. */
  readonly netOutBytes: number;
  /** total_net_input_bytes delta: bytes the server read from clients. */
  readonly netInBytes: number;
  /** used_cpu_user + used_cpu_sys delta, in µs: everything the server process did, I/O included. */
  readonly cpuUs: number;
  readonly byCommand: Record<string, CommandCost>;
}

function fields(info: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of info.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) map.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return map;
}

function numberField(map: Map<string, string>, name: string): number {
  const value = Number(map.get(name));
  if (!Number.isFinite(value)) throw new Error(`INFO has no numeric field ${name}`);
  return value;
}

interface Counters {
  readonly netOut: number;
  readonly netIn: number;
  readonly cpuUs: number;
}

async function counters(admin: Redis): Promise<Counters & { info: Map<string, string> }> {
  const info = fields(await admin.info('stats', 'cpu', 'commandstats'));
  return {
    info,
    netOut: numberField(info, 'total_net_output_bytes'),
    netIn: numberField(info, 'total_net_input_bytes'),
    cpuUs: Math.round((numberField(info, 'used_cpu_user') + numberField(info, 'used_cpu_sys')) * 1e6),
  };
}

/** Resets the counters and returns a function that reads what was spent since. */
export async function openWindow(admin: Redis): Promise<() => Promise<ServerCost>> {
  await admin.config('RESETSTAT');
  const before = await counters(admin);
  return async () => {
    const after = await counters(admin);
    const byCommand: Record<string, CommandCost> = {};
    let calls = 0;
    let usecAll = 0;
    let usecContainers = 0;
    let sawContainer = false;
    for (const [name, value] of after.info) {
      if (!name.startsWith('cmdstat_')) continue;
      const command = name.slice('cmdstat_'.length);
      if (ADMIN.test(command)) continue;
      const stat = Object.fromEntries(value.split(',').map((pair) => pair.split('=') as [string, string]));
      const cost = { calls: Number(stat.calls), usec: Number(stat.usec) };
      byCommand[command] = cost;
      calls += cost.calls;
      usecAll += cost.usec;
      if (CONTAINERS.has(command)) {
        sawContainer = true;
        usecContainers += cost.usec;
      }
    }
    return {
      calls,
      usecAll,
      usecTopLevel: sawContainer ? usecContainers : usecAll,
      netOutBytes: after.netOut - before.netOut,
      netInBytes: after.netIn - before.netIn,
      cpuUs: after.cpuUs - before.cpuUs,
      byCommand,
    };
  };
}

/** Bytes the server wrote to clients so far (for deltas without a reset). */
export async function netOutputBytes(admin: Redis): Promise<number> {
  return (await counters(admin)).netOut;
}

/** The server's version, from INFO server. */
export async function redisVersion(admin: Redis): Promise<string> {
  return fields(await admin.info('server')).get('redis_version') ?? 'unknown';
}
