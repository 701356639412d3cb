// iovalkey, the ioredis fork for Valkey, through the same adapter as ioredis
// (it is recognized by its shape, not by its package name).
import { describeRedisBackend } from './redis-backend.js';
import { IOVALKEY } from './redis-backends.js';

describeRedisBackend(IOVALKEY.standalone, { modelSchedules: 400, stackSchedules: 200, batchSchedules: 150 });
describeRedisBackend(IOVALKEY.cluster, { modelSchedules: 200, stackSchedules: 100, batchSchedules: 100 });
