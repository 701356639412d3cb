// Every contender of the bench, by store, and the connections the Redis ones
// are built on. The bench process and each contender's child process
// (../cell-worker.ts) build the same lists, and find a contender by its id.

import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import { floorContenders, memoryWindowFloor, noopFloor } from './floors.js';
import { libraryMemoryContender, libraryRedisContenders } from './library.js';
import { peerMemoryContenders, peerRedisContenders } from './peers.js';
import type { Clients, Contender } from './types.js';

/** The contenders on Redis: this library's, the peers', the floors'. */
export function redisContenders(clients: Clients): Contender[] {
  return [...libraryRedisContenders(clients), ...peerRedisContenders(clients), ...floorContenders(clients)];
}

/** The in-process contenders: this library's in-memory store, the peers', the floors'. */
export const MEMORY_CONTENDERS: readonly Contender[] = [libraryMemoryContender, ...peerMemoryContenders, noopFloor, memoryWindowFloor];

/** One connection per client library to the server at `url`, both connected. */
export async function openClients(url: string): Promise<Clients> {
  const clients: Clients = { ioredis: new Redis(url), nodeRedis: createClient({ url }) };
  await clients.nodeRedis.connect();
  return clients;
}

export function closeClients(clients: Clients): void {
  clients.ioredis.disconnect();
  clients.nodeRedis.destroy();
}
