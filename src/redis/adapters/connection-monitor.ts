// The last error a client reported, to name as the cause of a timeout. It is
// read through `events.errorMonitor`, which Node calls before the 'error'
// listeners without counting as one: a client that crashes or warns on an
// unhandled 'error' still does. ioredis emits 'error' only when someone
// listens (otherwise it prints "[ioredis] Unhandled error event"), so without
// a listener of the user's there is nothing to record. `node:events` is used
// where the runtime has it (core/node-builtin.ts), not imported: elsewhere a
// client's errors are not recorded, and a timeout names no cause.

import { withNodeBuiltin } from '../../core/node-builtin.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';

/** Node's `events.errorMonitor`, where there is a `node:events`. */
let errorMonitor: symbol | undefined;
withNodeBuiltin<{ readonly errorMonitor: symbol }>('node:events', (events) => {
  errorMonitor = events.errorMonitor;
});

/** Records `client`'s error events (once per adapter, so once per client); gives the problem of a summary, with the last error as its cause. */
export function monitorConnection(client: object): (summary: string) => ConnectionProblem {
  let lastError: Error | undefined;
  const { on } = client as { on?: unknown };
  if (typeof on === 'function' && errorMonitor !== undefined) {
    (on as (event: symbol, listener: (error: unknown) => void) => unknown).call(client, errorMonitor, (error: unknown) => {
      if (error instanceof Error) lastError = error;
    });
  }
  return (summary) => (lastError === undefined ? { summary } : { summary, cause: lastError });
}
