import { isRateLimiterError } from './errors/rate-limiter-error.js';
import { StoreError } from './errors/store-error.js';
import { TimeoutError, type ConnectionProblem } from './errors/timeout-error.js';
import { isStoreFailure } from './store-error-policy.js';

/**
 * Settles with `operation` or rejects with a {@link TimeoutError} after
 * `timeoutMs`, whichever comes first; any failure that is not already one of
 * ours becomes a {@link StoreError} carrying it as `cause`. The timer is
 * unreferenced and cleared, so it never keeps a process alive.
 */
export function callStore<T>(
  operation: () => Promise<T>,
  timeoutMs: number,
  what: string,
  diagnose?: () => ConnectionProblem | undefined,
): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = operation();
  } catch (error) {
    pending = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  return settleInTime(pending, timeoutMs, what, undefined, diagnose);
}

/**
 * {@link callStore} for a promise already made, and with an optional
 * `recover`: a store failure or a timeout is handed to it and the promise
 * settles as `recover` does; any other error rejects as it is. One promise for
 * all of it, because `limit()` comes through here on every decision.
 * `diagnose` (the adapter's `connectionProblem`) explains a timeout.
 */
export function settleInTime<T>(
  pending: Promise<T>,
  timeoutMs: number,
  what: string,
  recover?: (failure: StoreError | TimeoutError) => T | Promise<T>,
  diagnose?: () => ConnectionProblem | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (error: Error): void => {
      if (recover === undefined || !isStoreFailure(error)) {
        reject(error);
        return;
      }
      try {
        resolve(recover(error));
      } catch (recoveryError) {
        reject(recoveryError instanceof Error ? recoveryError : new Error(String(recoveryError)));
      }
    };
    const timer = setTimeout(() => fail(new TimeoutError(timeoutMs, diagnose?.())), timeoutMs);
    timer.unref();
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        fail(asLibraryError(error, what));
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
