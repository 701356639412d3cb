// The raw floors: what one decision costs with no library logic at all, on
// each client. A bare MULTI of the very commands this library's MULTI path
// sends (unique member per call; the reply is looked at only for the
// (k+1)-th newest score, and for the gap rule when there is one), a bare
// EVALSHA of the minimal script in ../floor-script.ts, a bare EVALSHA of the
// minimal script that decides the 3-tier stack of ./stack-tiers.ts, and a
// bare PING: one round trip that touches no key, the most any Redis limiter
// that makes one round trip per decision can reach on that client. Keys have
// the library's shape, `<namespace>:{<id>}`.
//
// And two in-process floors: an empty async decision (the measuring loop's
// own ceiling) and the least work an exact in-memory rolling window must do.

import { FLOOR_LUA, FLOOR_LUA_STACK } from '../floor-script.js';
import { stackTiers, type StackTier } from './stack-tiers.js';
import { libraryKey, type Backend, type Clients, type Contender, type Rules } from './types.js';

let sequence = 0;
const tag = Math.random().toString(36).slice(2, 10);

/** A microsecond-ish timestamp and a member unique to the call: what any caller must produce. */
function stamp(): { now: number; member: string } {
  sequence += 1;
  return { now: Date.now() * 1000 + (sequence % 1000), member: tag + sequence.toString(36) };
}

/** One attempt of the MULTI path: its commands, and what its replies are judged against. */
interface MultiAttempt {
  readonly commands: (string | number)[][];
  readonly now: number;
  readonly member: string;
}

/**
 * The MULTI path's command list for one attempt (see src/stores/redis-multi-path.ts):
 *
 * ```
 * ZADD             key <now> <member>        record the attempt
 * ZREVRANGE        key k k WITHSCORES        the (k+1)-th newest, this attempt included (k = maxInInterval)
 * ZREVRANGE        key 0 1 WITHSCORES        the two newest (only with a gap rule, minDifference > 0)
 * ZREMRANGEBYRANK  key 0 -(k+1)              keep only the newest k
 * PEXPIRE          key <interval ms>
 * ```
 */
function multiAttempt(key: string, rules: Rules): MultiAttempt {
  const k = rules.maxInInterval;
  const { now, member } = stamp();
  const commands: (string | number)[][] = [
    ['zadd', key, now, member],
    ['zrevrange', key, k, k, 'withscores'],
  ];
  if (rules.minDifference > 0) commands.push(['zrevrange', key, 0, 1, 'withscores']);
  commands.push(['zremrangebyrank', key, 0, -(k + 1)], ['pexpire', key, rules.interval]);
  return { commands, now, member };
}

/** A WITHSCORES reply, flat: [member, score, member, score, …]. */
type Scored = readonly unknown[] | null | undefined;

/**
 * Blocked by count when the (k+1)-th newest (this attempt included) is still
 * inside the window; blocked by the gap rule when the newest other attempt is
 * less than minDifference old. `kth` is the ZREVRANGE k k reply, `newestTwo`
 * the ZREVRANGE 0 1 reply (gap rule only).
 */
function blockedByReplies(rules: Rules, attempt: MultiAttempt, kth: Scored, newestTwo: Scored): boolean {
  const { now, member } = attempt;
  if (kth != null && kth.length >= 2 && Number(kth[1]) > now - rules.interval * 1000) return true;
  if (rules.minDifference <= 0 || newestTwo == null) return false;
  const previous = newestTwo[0] === member ? newestTwo[3] : newestTwo[1];
  return previous !== undefined && Number(previous) > now - rules.minDifference * 1000;
}

function floorArgs(rules: Rules): string[] {
  const { now, member } = stamp();
  return [String(now), String(now - rules.interval * 1000), String(rules.maxInInterval), member, String(rules.interval)];
}

/** FLOOR_LUA_STACK's arguments: now and the member, then each tier's cut-off, maximum and interval. */
function stackFloorArgs(tiers: readonly StackTier[]): string[] {
  const { now, member } = stamp();
  return [String(now), member, ...tiers.flatMap((tier) => [String(now - tier.interval * 1000), String(tier.maxInInterval), String(tier.interval)])];
}

/** How a client loads a script and calls it by SHA1, for the bare 3-tier floor. */
interface ScriptCaller {
  readonly load: (lua: string) => Promise<string>;
  readonly evalsha: (sha: string, keys: readonly string[], args: readonly string[]) => Promise<unknown>;
}

/** The bare EVALSHA of FLOOR_LUA_STACK over the stack's three keys (./stack-tiers.ts), sent with one client. */
function bareStackFloor(contenderId: string, backend: Backend, client: ScriptCaller): Contender {
  return {
    id: contenderId,
    label: `floor: bare EVALSHA, 3 tiers (minimal script), ${backend}`,
    family: 'floor',
    backend,
    create: async (rules, namespace) => {
      const tiers = stackTiers(rules, namespace);
      if (tiers.some((tier) => tier.minDifference > 0)) throw new Error('floor-lua-stack3 has no gap rule: minDifference must be 0');
      const sha = await client.load(FLOOR_LUA_STACK);
      return {
        keyOf: (id) => libraryKey(tiers[1].namespace, id),
        decide: async (id) => Number(await client.evalsha(sha, tiers.map((tier) => libraryKey(tier.namespace, id)), stackFloorArgs(tiers))) === 0,
      };
    },
  };
}

/** The Redis floors: bare MULTI, bare EVALSHA, the 3-tier bare EVALSHA and a PING, on ioredis and on node-redis 5, and the bare EVALSHA's twin (a noise gauge). */
export function floorContenders(clients: Clients): Contender[] {
  const { ioredis, nodeRedis } = clients;
  /** The bare EVALSHA of FLOOR_LUA on ioredis, under a given name. */
  const bareLuaFloor = (id: string, label: string): Contender => ({
    id,
    label,
    family: 'floor',
    backend: 'ioredis',
    create: async (rules, namespace) => {
      const sha = (await ioredis.script('LOAD', FLOOR_LUA)) as string;
      return {
        keyOf: (key) => libraryKey(namespace, key),
        decide: async (key) => (await ioredis.evalsha(sha, 1, libraryKey(namespace, key), ...floorArgs(rules))) === 0,
      };
    },
  });
  return [
    {
      id: 'floor-multi@ioredis',
      label: 'floor: bare MULTI (same commands), ioredis',
      family: 'floor',
      backend: 'ioredis',
      create: async (rules, namespace) => ({
        keyOf: (id) => libraryKey(namespace, id),
        decide: async (id) => {
          const attempt = multiAttempt(libraryKey(namespace, id), rules);
          const replies = await ioredis.multi(attempt.commands).exec();
          if (replies === null) throw new Error('MULTI aborted');
          return blockedByReplies(rules, attempt, replies[1]?.[1] as Scored, rules.minDifference > 0 ? (replies[2]?.[1] as Scored) : undefined);
        },
      }),
    },
    bareLuaFloor('floor-lua@ioredis', 'floor: bare EVALSHA (minimal script), ioredis'),
    // The same floor again, under another name: two identical contenders measured in the same run differ only by
    // the machine's noise, so their ratio shows how far apart two equal things can read here.
    bareLuaFloor('control-floor-lua@ioredis', 'control: bare EVALSHA again (noise gauge), ioredis'),
    bareStackFloor('floor-lua-stack3@ioredis', 'ioredis', {
      load: async (lua) => (await ioredis.script('LOAD', lua)) as string,
      evalsha: (sha, keys, args) => ioredis.evalsha(sha, keys.length, ...keys, ...args),
    }),
    {
      id: 'floor-multi@node-redis5',
      label: 'floor: bare MULTI (same commands), node-redis 5',
      family: 'floor',
      backend: 'node-redis 5',
      create: async (rules, namespace) => ({
        keyOf: (id) => libraryKey(namespace, id),
        decide: async (id) => {
          const attempt = multiAttempt(libraryKey(namespace, id), rules);
          const multi = nodeRedis.multi();
          for (const command of attempt.commands) multi.addCommand(command.map(String));
          const replies = await multi.exec();
          return blockedByReplies(rules, attempt, replies[1] as Scored, rules.minDifference > 0 ? (replies[2] as Scored) : undefined);
        },
      }),
    },
    {
      id: 'floor-lua@node-redis5',
      label: 'floor: bare EVALSHA (minimal script), node-redis 5',
      family: 'floor',
      backend: 'node-redis 5',
      create: async (rules, namespace) => {
        const sha = await nodeRedis.sendCommand<string>(['SCRIPT', 'LOAD', FLOOR_LUA]);
        return {
          keyOf: (id) => libraryKey(namespace, id),
          decide: async (id) =>
            Number(await nodeRedis.sendCommand(['EVALSHA', sha, '1', libraryKey(namespace, id), ...floorArgs(rules)])) === 0,
        };
      },
    },
    bareStackFloor('floor-lua-stack3@node-redis5', 'node-redis 5', {
      load: (lua) => nodeRedis.sendCommand<string>(['SCRIPT', 'LOAD', lua]),
      evalsha: (sha, keys, args) => nodeRedis.sendCommand(['EVALSHA', sha, String(keys.length), ...keys, ...args]),
    }),
    {
      id: 'floor-ping@ioredis',
      label: 'floor: PING round trip, ioredis',
      family: 'floor',
      backend: 'ioredis',
      create: async () => ({
        decide: async () => {
          await ioredis.ping();
          return false;
        },
      }),
    },
    {
      id: 'floor-ping@node-redis5',
      label: 'floor: PING round trip, node-redis 5',
      family: 'floor',
      backend: 'node-redis 5',
      create: async () => ({
        decide: async () => {
          await nodeRedis.ping();
          return false;
        },
      }),
    },
  ];
}

/** The measuring loop's own ceiling: an async decision that does nothing. */
export const noopFloor: Contender = {
  id: 'floor-noop',
  label: 'floor: empty async decision (harness ceiling)',
  family: 'floor',
  backend: 'memory',
  create: async () => ({ decide: async () => false }),
};

/**
 * The least work any exact in-memory rolling-window limiter must do: one
 * array of microsecond timestamps per id, oldest first; drop from the front
 * what left the window, block when `maxInInterval` remain, else push now.
 * No gap rule, no wait time, no clean-up of idle ids (its memory is not
 * bounded), no validation: a lower bound on work, not a limiter to ship.
 */
export const memoryWindowFloor: Contender = {
  id: 'floor-memory-window',
  label: 'floor: minimal rolling window in a Map (no library)',
  family: 'floor',
  backend: 'memory',
  create: async (rules) => {
    const windows = new Map<string, number[]>();
    const intervalUs = rules.interval * 1000;
    return {
      decide: async (id) => {
        const now = Date.now() * 1000;
        let times = windows.get(id);
        if (times === undefined) {
          times = [];
          windows.set(id, times);
        }
        const cutoff = now - intervalUs;
        let expired = 0;
        while (expired < times.length && (times[expired] as number) <= cutoff) expired += 1;
        if (expired > 0) times.splice(0, expired);
        if (times.length >= rules.maxInInterval) return true;
        times.push(now);
        return false;
      },
      dispose: () => windows.clear(),
    };
  },
};
