import { UnsupportedError } from '../errors/unsupported-error.js';
import type { RedisAdapter } from './adapter.js';
import { IORedisAdapter, isIORedisClient } from './ioredis-adapter.js';

/** The clients this version supports, as named in error messages. */
export const SUPPORTED_CLIENTS = 'an ioredis `Redis` or `Cluster` instance (ioredis 5 or later)';

/** Picks the adapter for a client, or throws an {@link UnsupportedError} listing what is supported. */
export function createAdapter(client: object): RedisAdapter {
  if (isIORedisClient(client)) return new IORedisAdapter(client);
  throw new UnsupportedError(
    `Unsupported \`client\` (${client.constructor?.name ?? typeof client}): expected ${SUPPORTED_CLIENTS}, or no client for the in-memory store`,
  );
}
