import { isRateLimiterError } from './errors/rate-limiter-error.js';
import { StoreError } from './errors/store-error.js';
import { TimeoutError } from './errors/timeout-error.js';
import { isStoreFailure } from './store-error-policy.js';

/**
 * Settles with `operation` or rejects with a {@link TimeoutError} after
 * `timeoutMs`, whichever comes first; any failure that is not already one of
 * ours becomes a {@link StoreError} carrying it as `cause`. The timer is
 * unreferenced and cleared, so it never keeps a process alive.
 */
export function callStore<T>(operation: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = operation();
  } catch (error) {
    pending = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  return settleInTime(pending, timeoutMs, what);
}

/**
 * {@link callStore} for a promise already made, and with an optional
 * `recover`: a store failure or a timeout is handed to it and the promise
 * settles as `recover` does; any other error rejects as it is.
 *
 * The call settles once, by whichever comes first, and what happens after
 * that goes nowhere: a store that answers or fails after the timeout has
 * already settled the call is ignored, so `recover` (the `onStoreError`
 * policy, a fallback limiter) runs at most once per call, and a late
 * rejection is handled here rather than left to crash the process.
 */
export function settleInTime<T>(
  pending: Promise<T>,
  timeoutMs: number,
  what: string,
  recover?: (failure: StoreError | TimeoutError) => T | Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
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
    const timer = setTimeout(() => fail(new TimeoutError(timeoutMs)), timeoutMs);
    timer.unref();
    pending.then(
      (value) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
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
