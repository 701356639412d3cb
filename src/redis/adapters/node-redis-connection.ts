// What node-redis clients (client, cluster, sentinel) show about their
// connection, in the words of the limiter's errors.

import { StoreError } from '../../errors/store-error.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';

/**
 * Makes a call on a node-redis client when it is open; otherwise rejects at
 * once with a StoreError that says how to open it. The one check before every
 * call of the node-redis adapters.
 */
export function whenOpen<T>(client: { readonly isOpen: boolean }, kind: string, call: () => Promise<T>): Promise<T> {
  if (client.isOpen) return call();
  return Promise.reject(
    new StoreError(
      `The ${kind} client is not connected (isOpen is false): node-redis clients do not connect by themselves, ` +
        'so call `await client.connect()` before the first call, and do not use the client after `quit()`, `close()` or `destroy()`',
    ),
  );
}

/** What is wrong with a node-redis client's connection, from `isOpen` and `isReady`, or undefined when it looks ready. */
export function nodeRedisConnectionProblem(
  kind: string,
  client: { readonly isOpen: boolean; readonly isReady?: boolean },
  lastError: Error | undefined,
): ConnectionProblem | undefined {
  if (!client.isOpen) return { summary: `the ${kind} client is not connected (isOpen is false): call \`await client.connect()\` first` };
  if (client.isReady !== false) return undefined;
  const summary = `the ${kind} client has lost its connection and is reconnecting (isReady is false)`;
  return lastError === undefined ? { summary } : { summary, cause: lastError };
}
