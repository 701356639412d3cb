// Slot moves on a real 3-master Redis Cluster (test/support/slot-move-scenarios.ts),
// with ioredis and iovalkey `Cluster` and node-redis 4, 5 and 6 `createCluster`.

import { CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { describeSlotMoves } from '../../support/slot-move-scenarios.js';

describeSlotMoves(CLUSTER_CLIENTS);
