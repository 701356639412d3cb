// Runs the whole behavioural contract against one Redis client on a real
// redis-server (started by the harness, or REDIS_URL): one call per client
// library, so every supported client passes the very same suite.

import { RollingRateLimiter, type RedisClient } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useRedis } from '../support/redis-server.js';
import { describeLimiterContract } from './limiter-contract.js';

/** A connected client and how to close it. */
export interface ConnectedClient {
  readonly client: RedisClient;
  close(): Promise<void>;
}

/** One client library, and how to connect it to a server URL. */
export interface RedisBackend {
  /** As it appears in test titles, e.g. `node-redis 5 (standalone)`. */
  readonly name: string;
  connect(url: string): Promise<ConnectedClient>;
}

/**
 * Describes the contract on `backend` against a standalone redis-server.
 * `extra` receives a getter for the connected client, to add suites that
 * need it (stacks, for instance).
 */
export function describeRedisBackend(
  backend: RedisBackend,
  options: { modelSchedules: number },
  extra?: (client: () => RedisClient, namespaces: { next(suffix?: string): string }) => void,
): void {
  describe(`real Redis through ${backend.name}`, () => {
    let server: Awaited<ReturnType<typeof useRedis>> | undefined;
    let connected: ConnectedClient | undefined;
    before(async () => {
      server = await useRedis();
      connected = await backend.connect(server.url);
    });
    after(async () => {
      await connected?.close();
      await server?.stop();
    });

    const client = (): RedisClient => {
      if (connected === undefined) throw new Error('not connected');
      return connected.client;
    };
    const namespaces = uniqueNamespaces('contract');
    describeLimiterContract(
      backend.name,
      () => (limiterOptions) => new RollingRateLimiter({ ...limiterOptions, client: client(), namespace: namespaces.next(limiterOptions.namespace) }),
      { countBlockedFalse: true, modelSchedules: options.modelSchedules },
    );
    extra?.(client, namespaces);
  });
}
