import { describeRedisBackend } from './redis-backend.js';
import { IOREDIS_5, IOREDIS_6 } from './redis-backends.js';

describeRedisBackend(IOREDIS_5.standalone, { modelSchedules: 1000, stackSchedules: 500, batchSchedules: 400 });
describeRedisBackend(IOREDIS_6.standalone, { modelSchedules: 400, stackSchedules: 200, batchSchedules: 150 });
describeRedisBackend(IOREDIS_5.cluster, { modelSchedules: 400, stackSchedules: 200, batchSchedules: 200 });
describeRedisBackend(IOREDIS_6.cluster, { modelSchedules: 200, stackSchedules: 100, batchSchedules: 100 });
