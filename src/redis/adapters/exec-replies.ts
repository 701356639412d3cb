import { describeValue } from '../../core/check.js';

/**
 * What EXEC answered, read alike for every client: the replies as a list, or
 * the failure they report: `null` (Redis aborted the transaction), anything
 * but a list, or the first error reply (node-redis and redis-mock resolve with
 * errors in place; ioredis's `[error, result]` pairs come here unpaired).
 * @throws the first error reply, or an Error naming what EXEC answered instead of a list.
 */
export function execReplies(replies: unknown): unknown[] {
  if (replies === null) throw new Error('MULTI was aborted by Redis (EXEC returned null)');
  if (!Array.isArray(replies)) throw new Error(`MULTI answered ${describeValue(replies)} instead of a list of replies`);
  for (const reply of replies) if (reply instanceof Error) throw reply;
  return replies as unknown[];
}
