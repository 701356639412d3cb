// Slot moves on a real 3-master Redis Cluster (test/support/slot-move-scenarios.ts),
// with ioredis `Cluster` and node-redis 4 and 5 `createCluster`.

import { CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { describeSlotMoves } from '../../support/slot-move-scenarios.js';

describeSlotMoves(CLUSTER_CLIENTS);
