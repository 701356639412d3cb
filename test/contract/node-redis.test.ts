import { describeRedisBackend } from './redis-backend.js';
import { NODE_REDIS_4, NODE_REDIS_5, NODE_REDIS_5_RESP3 } from './redis-backends.js';

describeRedisBackend(NODE_REDIS_4.standalone, { modelSchedules: 500, stackSchedules: 200, batchSchedules: 150 });
describeRedisBackend(NODE_REDIS_5.standalone, { modelSchedules: 500, stackSchedules: 200, batchSchedules: 300 });
describeRedisBackend(NODE_REDIS_5_RESP3, { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 });
describeRedisBackend(NODE_REDIS_4.cluster, { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 });
describeRedisBackend(NODE_REDIS_5.cluster, { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 });
