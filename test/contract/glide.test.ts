// Valkey GLIDE 2 (`GlideClient`, `GlideClusterClient`) through the same
// contract as every other client: every mode, stacks, action ids, batch: true
// (per slot on a cluster), the model tests and concurrent connections.

import { connectGlideCluster, GLIDE_STANDALONE } from '../support/glide-clients.js';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(GLIDE_STANDALONE, { modelSchedules: 500, stackSchedules: 200, batchSchedules: 200 });

describeRedisBackend(
  {
    name: 'Valkey GLIDE 2 GlideClusterClient (3 masters)',
    topology: 'cluster',
    async connect({ rootNodes }) {
      const client = await connectGlideCluster(rootNodes);
      return { client, close: async () => client.close() };
    },
  },
  { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 },
);
