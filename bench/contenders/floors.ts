// The raw floors: what one decision costs with no library logic at all, on
// each client, built from the library's own command list and script (never
// restated here): a bare MULTI of exactly the commands `attemptCommands()`
// gives for the attempt (the default path's), whose replies are read only for
// |S| (and the newest score when there is a gap rule); a bare EVALSHA of the
// decide script with the arguments the script path sends, for one limiter and
// for the 3-tier stack of ./stack-tiers.ts, whose reply is read only for its
// allowed flag; and a bare PING: one round trip that touches no key, the most
// any Redis limiter that makes one round trip per decision can reach on that
// client. Keys have the library's shape, `<namespace>:{<id>}`.
//
// And two in-process floors: an empty async decision (the measuring loop's
// own ceiling) and the least work an exact in-memory rolling window must do.

import type { WindowRule } from '../../src/core/decision-model.js';
import { DECIDE_SCRIPT } from '../../src/redis/scripts/decide-script.js';
import { attemptCommands } from '../../src/redis/multi-path.js';
import { stackTiers } from './stack-tiers.js';
import { libraryKey, type Backend, type Clients, type Contender, type Rules } from './types.js';

let sequence = 0;
const tag = Math.random().toString(36).slice(2, 10);

/** A microsecond timestamp and a member unique to the call: what any caller must produce. */
function stamp(): { now: number; member: string } {
  sequence += 1;
  return { now: Date.now() * 1000 + (sequence % 1000), member: tag + sequence.toString(36) };
}

/** The library's rule for `rules` (countBlocked as given). */
function windowRule(rules: Rules, countBlocked: boolean): WindowRule {
  return { intervalUs: rules.interval * 1000, maxInInterval: rules.maxInInterval, minDifferenceUs: rules.minDifference * 1000, countBlocked };
}

/**
 * Blocked, from the replies of `attemptCommands()`: |S| (the ZCARD, second)
 * reached k, or the newest score (the first ZREVRANGE, third) is less than
 * the gap old.
 */
function blockedByReplies(rule: WindowRule, now: number, count: unknown, newest: unknown): boolean {
  if (Number(count) >= rule.maxInInterval) return true;
  if (rule.minDifferenceUs <= 0 || !Array.isArray(newest) || newest.length < 2) return false;
  return now - Number(newest[1]) < rule.minDifferenceUs;
}

/** The decide script's arguments as the script path sends them (record mode, no action id), all strings. */
function decideArgs(rules: readonly WindowRule[]): string[] {
  const { now, member } = stamp();
  const args = [String(now), member, '1', ''];
  for (const rule of rules) args.push(String(rule.intervalUs), String(rule.maxInInterval), String(rule.minDifferenceUs), rule.countBlocked ? '1' : '0');
  return args;
}

/** How a client loads a script and calls it by SHA1. */
interface ScriptCaller {
  readonly load: (lua: string) => Promise<unknown>;
  readonly evalsha: (sha: string, keys: readonly string[], args: readonly string[]) => Promise<unknown>;
}

/** Allowed: the decide script's second value. */
function allowedByReply(reply: unknown): boolean {
  return Array.isArray(reply) && Number(reply[1]) === 1;
}

/** A bare EVALSHA of the decide script with one client: one limiter with countBlocked false (the script path), or the 3-tier stack. */
function bareDecide(id: string, label: string, backend: Backend, client: ScriptCaller, tiers: 'one' | 'stack3'): Contender {
  return {
    id,
    label,
    family: 'floor',
    backend,
    create: async (rules, namespace) => {
      if ((await client.load(DECIDE_SCRIPT.lua)) !== DECIDE_SCRIPT.sha1) throw new Error('SCRIPT LOAD answered another SHA1 than DECIDE_SCRIPT.sha1');
      const spaces = tiers === 'one' ? [{ namespace, ...rules }] : stackTiers(rules, namespace);
      const windowRules = spaces.map((tier) => windowRule(tier, false));
      return {
        keyOf: (key) => libraryKey((spaces[1] ?? spaces[0]).namespace, key),
        decide: async (key) => {
          const keys = spaces.map((tier) => libraryKey(tier.namespace, key));
          return !allowedByReply(await client.evalsha(DECIDE_SCRIPT.sha1, keys, decideArgs(windowRules)));
        },
      };
    },
  };
}

/** The Redis floors: bare MULTI, bare EVALSHA (one limiter and 3 tiers) and a PING, on ioredis and on node-redis 5, and the bare EVALSHA's twin (a noise gauge). */
export function floorContenders(clients: Clients): Contender[] {
  const { ioredis, nodeRedis } = clients;
  const onIoredis: ScriptCaller = {
    load: (lua) => ioredis.script('LOAD', lua),
    evalsha: (sha, keys, args) => ioredis.evalsha(sha, keys.length, ...keys, ...args),
  };
  const onNodeRedis: ScriptCaller = {
    load: (lua) => nodeRedis.sendCommand(['SCRIPT', 'LOAD', lua]),
    evalsha: (sha, keys, args) => nodeRedis.sendCommand(['EVALSHA', sha, String(keys.length), ...keys, ...args]),
  };
  return [
    {
      id: 'floor-multi@ioredis',
      label: 'floor: bare MULTI (same commands), ioredis',
      family: 'floor',
      backend: 'ioredis',
      create: async (rules, namespace) => {
        const rule = windowRule(rules, true);
        return {
          keyOf: (id) => libraryKey(namespace, id),
          decide: async (id) => {
            const { now, member } = stamp();
            const replies = await ioredis.multi(attemptCommands(libraryKey(namespace, id), rule, now, member) as unknown as (string | number)[][]).exec();
            if (replies === null) throw new Error('MULTI aborted');
            return blockedByReplies(rule, now, replies[1]?.[1], replies[2]?.[1]);
          },
        };
      },
    },
    bareDecide('floor-lua@ioredis', 'floor: bare EVALSHA (decide script), ioredis', 'ioredis', onIoredis, 'one'),
    // The same floor again, under another name: two identical contenders measured in the same run differ only by
    // the machine's noise, so their ratio shows how far apart two equal things can read here.
    bareDecide('control-floor-lua@ioredis', 'control: bare EVALSHA again (noise gauge), ioredis', 'ioredis', onIoredis, 'one'),
    bareDecide('floor-lua-stack3@ioredis', 'floor: bare EVALSHA, 3 tiers (decide script), ioredis', 'ioredis', onIoredis, 'stack3'),
    {
      id: 'floor-multi@node-redis5',
      label: 'floor: bare MULTI (same commands), node-redis 5',
      family: 'floor',
      backend: 'node-redis 5',
      create: async (rules, namespace) => {
        const rule = windowRule(rules, true);
        return {
          keyOf: (id) => libraryKey(namespace, id),
          decide: async (id) => {
            const { now, member } = stamp();
            const multi = nodeRedis.multi();
            for (const command of attemptCommands(libraryKey(namespace, id), rule, now, member)) multi.addCommand(command.map(String));
            const replies = await multi.exec();
            return blockedByReplies(rule, now, replies[1], replies[2]);
          },
        };
      },
    },
    bareDecide('floor-lua@node-redis5', 'floor: bare EVALSHA (decide script), node-redis 5', 'node-redis 5', onNodeRedis, 'one'),
    bareDecide('floor-lua-stack3@node-redis5', 'floor: bare EVALSHA, 3 tiers (decide script), node-redis 5', 'node-redis 5', onNodeRedis, 'stack3'),
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
