// Valkey GLIDE 2 clients for the tests: a `GlideClient` on one server and a
// `GlideClusterClient` on a cluster started by test/support. GLIDE's native
// core logs every error reply it receives at WARN; the tests provoke many
// (NOSCRIPT, outages), so its logger is set to ERROR before the first client.

import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import type { RedisBackend } from '../contract/redis-backend.js';
import type { ClusterClientKind } from './cluster-clients.js';

/** Where GLIDE connects: hosts and ports. */
type Addresses = readonly { readonly host: string; readonly port: number }[];

/**
 * GLIDE's default `requestTimeout` is 250 ms, less than its own retries take
 * while a slot migrates (up to 1.3 s here); the limiter's `timeout` is the
 * one the tests mean.
 */
const REQUEST_TIMEOUT_MS = 5_000;

let loggerSet = false;
function quietLogger(): void {
  if (!loggerSet) Logger.setLoggerConfig('error');
  loggerSet = true;
}

/** A connected `GlideClient` on the first of `addresses`. */
export async function connectGlide(addresses: Addresses): Promise<GlideClient> {
  quietLogger();
  return GlideClient.createClient({ addresses: [...addresses], requestTimeout: REQUEST_TIMEOUT_MS });
}

/** A connected `GlideClusterClient` seeded with `addresses`. */
export async function connectGlideCluster(addresses: Addresses): Promise<GlideClusterClient> {
  quietLogger();
  return GlideClusterClient.createClient({ addresses: [...addresses], requestTimeout: REQUEST_TIMEOUT_MS });
}

/** GLIDE's `GlideClusterClient` as a cluster client of the cluster tests (test/redis/cluster/glide-*.test.ts). */
export const GLIDE_CLUSTER_CLIENT: ClusterClientKind = {
  name: 'Valkey GLIDE GlideClusterClient',
  connect: async (cluster) => {
    const client = await connectGlideCluster(cluster.rootNodes);
    return { client, close: async () => client.close() };
  },
};

/** GLIDE's `GlideClient` on one server, as a backend of the contract (test/contract/glide.test.ts, and under Bun). */
export const GLIDE_STANDALONE: RedisBackend = {
  name: 'Valkey GLIDE 2 GlideClient (standalone)',
  topology: 'standalone',
  async connect({ rootNodes }) {
    const client = await connectGlide(rootNodes);
    return { client, close: async () => client.close() };
  },
};
