import { isRateLimiterError } from '../errors/rate-limiter-error.js';
import { StoreError } from '../errors/store-error.js';
import { TimeoutError, type ConnectionProblem } from '../errors/timeout-error.js';

/**
 * Settles with `operation` or rejects with a {@link TimeoutError} after
 * `timeoutMs` (an unreferenced timer), once (docs/semantics.md, "Failures");
 * any failure not already one of ours becomes a {@link StoreError} with it as `cause`.
 *
 * @param diagnose Says what is wrong with the connection (the adapter's `connectionProblem`), to explain a timeout.
 */
export function callStore<T>(operation: () => Promise<T>, timeoutMs: number, what: string, diagnose?: () => ConnectionProblem | undefined): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = operation();
  } catch (error) {
    pending = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(new TimeoutError(timeoutMs, diagnose?.()));
    }, timeoutMs);
    // Node's timers keep a process alive unless unreferenced; a web runtime's timer is a number, with nothing to unreference.
    (timer as { unref?: () => void }).unref?.();
    pending.then(
      (value) => {
        clearTimeout(timer);
        if (!settled) resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!settled) reject(asLibraryError(error, what));
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
