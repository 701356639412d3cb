// The last error a client reported, to name as the cause of a timeout. It is
// read through `events.errorMonitor`, which Node calls before the 'error'
// listeners without counting as one: a client that crashes or warns on an
// unhandled 'error' still does. ioredis emits 'error' only when someone
// listens (otherwise it prints "[ioredis] Unhandled error event"), so without
// a listener of the user's there is nothing to record.

import { errorMonitor } from 'node:events';

/**
 * Records a client's error events from its construction on. An adapter owns
 * one, and there is one adapter per client (see `adapterFor`), so a client
 * gets one listener however many limiters share it.
 */
export class ConnectionMonitor {
  #lastError: Error | undefined;

  constructor(client: object) {
    const emitter = client as { on?: unknown };
    if (typeof emitter.on !== 'function') return;
    (emitter.on as (event: symbol, listener: (error: unknown) => void) => unknown).call(client, errorMonitor, (error: unknown) => {
      if (error instanceof Error) this.#lastError = error;
    });
  }

  /** The last error the client emitted, or undefined when it emitted none (or no one listens, for ioredis). */
  get lastError(): Error | undefined {
    return this.#lastError;
  }
}
