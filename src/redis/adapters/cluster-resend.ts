// Sending a call again after a cluster refused it (MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN, EXECABORT: see cluster-redirection.ts). Nothing was run, so
// sending it again cannot record an attempt twice. The call goes to the node
// the answer named, or to the master the client holds for the slot once its
// map is refreshed: `ASKING` and the call queued together on that node's
// connection, so nothing can come between them (node-redis 4 sends ASKING
// apart from its command, so under concurrency another command can take it).

import { maxRetries, redirectionOf, retryPauseMs } from './cluster-redirection.js';
import type { ClusterSlotMap, NodeConnection } from './cluster-slot-map.js';

/**
 * Sends a call refused by a redirection again, on the node that holds its
 * slot, up to {@link maxRetries} times, each after a pause of
 * {@link retryPauseMs}; any other error is thrown as it is.
 */
export async function resend<T>(
  error: unknown,
  key: string,
  slots: ClusterSlotMap,
  send: (node: NodeConnection, asking: boolean) => Promise<T>,
): Promise<T> {
  let last = error;
  for (let retry = 1; ; retry++) {
    const redirection = redirectionOf(last);
    if (redirection === undefined || retry > maxRetries(redirection) || !slots.readable) throw last;
    await pause(retryPauseMs(retry, redirection));
    try {
      if (redirection.kind !== 'ask') await slots.refresh(key);
      const node = await slots.connectionTo(redirection.address, key);
      if (node === undefined) throw last;
      return await send(node, redirection.kind === 'ask');
    } catch (next) {
      last = next;
    }
  }
}

/**
 * Sends `commands` to one node back to back, in one turn of the event loop, so
 * that they sit together in its connection's queue: `ASKING` first when asked,
 * then the commands. Resolves with the last reply; rejects with the first error.
 */
export function sendTogether(node: NodeConnection, asking: boolean, commands: readonly string[][]): Promise<unknown> {
  const replies: Promise<unknown>[] = [];
  if (asking) replies.push(node.sendCommand(['ASKING']));
  for (const command of commands) replies.push(node.sendCommand(command));
  return Promise.allSettled(replies).then(lastValueOrFirstError);
}

/** The first rejection among `outcomes` in order (an ASK or MOVED before EXEC's EXECABORT), else the last value. */
function lastValueOrFirstError(outcomes: PromiseSettledResult<unknown>[]): unknown {
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return (outcomes[outcomes.length - 1] as PromiseFulfilledResult<unknown>).value;
}

/** Resolves after `ms` (at once for 0), without keeping the process alive. */
export function pause(ms: number): Promise<void> {
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
