import { randomBytes } from 'node:crypto';

/** Namespaces unique to this test run, so tests never see each other's keys (or a user's, with REDIS_URL). */
export function uniqueNamespaces(prefix: string): { next(suffix?: string): string } {
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  return {
    next(suffix = '') {
      counter += 1;
      return `test:${prefix}:${run}:${counter}:${suffix}`;
    },
  };
}
