import { isRateLimiterError } from './errors/rate-limiter-error.js';
import { StoreError } from './errors/store-error.js';
import { TimeoutError } from './errors/timeout-error.js';

/**
 * Settles with `operation` or rejects with a {@link TimeoutError} after
 * `timeoutMs`, whichever comes first; any failure that is not already one of
 * ours becomes a {@link StoreError} carrying it as `cause`. The timer is
 * unreferenced and cleared, so it never keeps a process alive.
 */
export function callStore<T>(operation: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(timeoutMs)), timeoutMs);
    timer.unref();
    let pending: Promise<T>;
    try {
      pending = operation();
    } catch (error) {
      pending = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(asLibraryError(error, what));
      },
    );
  });
}

/** Our own errors pass through; anything else becomes a StoreError carrying it as `cause`. */
function asLibraryError(error: unknown, what: string): Error {
  if (isRateLimiterError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreError(`${what} failed: ${reason}`, { cause: error });
}
