import { isRateLimiterError } from './errors/rate-limiter-error.js';
import { StoreError } from './errors/store-error.js';
import { TimeoutError } from './errors/timeout-error.js';

/**
 * Settles with `operation` or rejects with a {@link TimeoutError} after
 * `timeoutMs`, whichever comes first; any failure that is not already one of
 * ours becomes a {@link StoreError} carrying it as `cause`. The timer is
 * unreferenced and cleared, so it never keeps a process alive.
 */
export async function callStore<T>(operation: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(timeoutMs)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([operation(), timedOut]);
  } catch (error) {
    if (isRateLimiterError(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreError(`${what} failed: ${reason}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
