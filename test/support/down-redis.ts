// An ioredis client of a Redis that is down: a loopback port nothing listens
// on, no offline queue and no reconnection, so that every command fails at
// once, for the tests of what a store failure does.

import { Redis } from 'ioredis';
import { findFreeLoopbackPort } from './free-port.js';

/** A client whose every command fails at once; `disconnect()` it afterwards. */
export async function downRedisClient(): Promise<Redis> {
  const port = await findFreeLoopbackPort();
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  return client;
}
