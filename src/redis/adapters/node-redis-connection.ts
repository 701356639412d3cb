// What node-redis clients (client, cluster, sentinel) show about their
// connection, in the words of the limiter's errors.

import { StoreError } from '../../errors/store-error.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';

/** The error of a call on a node-redis client that is not open: never connected, or closed. */
export function notOpenError(kind: string): StoreError {
  return new StoreError(
    `The ${kind} client is not connected (isOpen is false): node-redis clients do not connect by themselves, ` +
      'so call `await client.connect()` before the first call, and do not use the client after `quit()`, `close()` or `destroy()`',
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
