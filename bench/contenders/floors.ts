// The raw floors: what one decision costs with no library logic at all, on
// each client. A bare MULTI of the very commands this library's MULTI path
// sends (unique member per call; the reply is looked at only for ZCARD), and a
// bare EVALSHA of the minimal script in ../floor-script.ts. Keys have the
// library's shape, `<namespace>:{<id>}`.

import { FLOOR_LUA } from '../floor-script.js';
import { libraryKey, type Clients, type Contender, type Rules } from './types.js';

let sequence = 0;
const tag = Math.random().toString(36).slice(2, 10);

/** A microsecond-ish timestamp and a member unique to the call: what any caller must produce. */
function stamp(): { now: number; member: string } {
  sequence += 1;
  return { now: Date.now() * 1000 + (sequence % 1000), member: tag + sequence.toString(36) };
}

/** The MULTI path's command list for one attempt (see src/stores/redis-multi-path.ts). */
function multiCommands(key: string, rules: Rules): (string | number)[][] {
  const k = rules.maxInInterval;
  const { now, member } = stamp();
  const commands: (string | number)[][] = [
    ['zremrangebyscore', key, '-inf', now - rules.interval * 1000],
    ['zadd', key, now, member],
    ['zcard', key],
    ['zrevrange', key, 0, 1, 'withscores'],
  ];
  if (k > 2) commands.push(['zrevrange', key, k - 1, k - 1, 'withscores']);
  commands.push(['zremrangebyrank', key, 0, -(k + 1)], ['pexpire', key, rules.interval]);
  return commands;
}

function floorArgs(rules: Rules): string[] {
  const { now, member } = stamp();
  return [String(now), String(now - rules.interval * 1000), String(rules.maxInInterval), member, String(rules.interval)];
}

/** The four floors: bare MULTI and bare EVALSHA, on ioredis and on node-redis 5. */
export function floorContenders(clients: Clients): Contender[] {
  const { ioredis, nodeRedis } = clients;
  return [
    {
      id: 'floor-multi@ioredis',
      label: 'floor: bare MULTI (same commands), ioredis',
      family: 'floor',
      backend: 'ioredis',
      create: async (rules, namespace) => ({
        keyOf: (id) => libraryKey(namespace, id),
        decide: async (id) => {
          const replies = await ioredis.multi(multiCommands(libraryKey(namespace, id), rules)).exec();
          return (replies?.[2]?.[1] as number) > rules.maxInInterval;
        },
      }),
    },
    {
      id: 'floor-lua@ioredis',
      label: 'floor: bare EVALSHA (minimal script), ioredis',
      family: 'floor',
      backend: 'ioredis',
      create: async (rules, namespace) => {
        const sha = (await ioredis.script('LOAD', FLOOR_LUA)) as string;
        return {
          keyOf: (id) => libraryKey(namespace, id),
          decide: async (id) => (await ioredis.evalsha(sha, 1, libraryKey(namespace, id), ...floorArgs(rules))) === 0,
        };
      },
    },
    {
      id: 'floor-multi@node-redis5',
      label: 'floor: bare MULTI (same commands), node-redis 5',
      family: 'floor',
      backend: 'node-redis 5',
      create: async (rules, namespace) => ({
        keyOf: (id) => libraryKey(namespace, id),
        decide: async (id) => {
          const multi = nodeRedis.multi();
          for (const command of multiCommands(libraryKey(namespace, id), rules)) multi.addCommand(command.map(String));
          const replies = await multi.exec();
          return Number(replies[2]) > rules.maxInInterval;
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
