// The last error a client reported, to name as the cause of a timeout. It is
// read through `events.errorMonitor`, which Node calls before the 'error'
// listeners without counting as one: a client that crashes or warns on an
// unhandled 'error' still does. ioredis emits 'error' only when someone
// listens (otherwise it prints "[ioredis] Unhandled error event"), so without
// a listener of the user's there is nothing to record. One monitor per
// client, however many limiters share it.

import { errorMonitor } from 'node:events';

/** The last error of each client watched so far. */
const lastErrors = new WeakMap<object, { error: Error | undefined }>();

/** Starts recording `client`'s error events (once per client) and returns a reader of the last one. */
export function watchErrors(client: object): () => Error | undefined {
  let record = lastErrors.get(client);
  if (record === undefined) {
    const created: { error: Error | undefined } = { error: undefined };
    record = created;
    lastErrors.set(client, created);
    const emitter = client as { on?: unknown };
    if (typeof emitter.on === 'function') {
      (emitter.on as (event: symbol, listener: (error: unknown) => void) => unknown).call(client, errorMonitor, (error: unknown) => {
        if (error instanceof Error) created.error = error;
      });
    }
  }
  const watched = record;
  return () => watched.error;
}
