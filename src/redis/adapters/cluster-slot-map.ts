// What a node-redis cluster client knows of its cluster, read by duck typing
// (node-redis 4 and 5 both expose it): which master holds a slot, and a
// connection to each node. And the one way to make the client re-read its
// slot map: a command through the client that some master answers with MOVED.

import { hasMembers, type NodeRedisLikeCluster } from './client-types.js';
import { retryRedirected } from './cluster-redirection.js';
import { keySlot } from './key-slot.js';

/** A connection to one node, as node-redis's `nodeClient()` gives it. */
interface NodeConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

/** What node-redis 4 and 5 cluster clients expose about their nodes. */
interface ClusterNodes {
  readonly nodeByAddress: { get(address: string): object | undefined };
  readonly slots: ArrayLike<{ readonly master?: { readonly address?: string } } | undefined>;
  nodeClient(node: object): NodeConnection | Promise<NodeConnection>;
}

function hasNodes(client: object): client is ClusterNodes {
  return hasMembers(client, { nodeClient: 'function', nodeByAddress: 'object', slots: 'object' });
}

/** The slot map of one node-redis cluster client, as the adapter reads and refreshes it. */
export class ClusterSlotMap {
  readonly #client: NodeRedisLikeCluster;
  #refreshing: Promise<unknown> | undefined;

  constructor(client: NodeRedisLikeCluster) {
    this.#client = client;
  }

  /** The address (`host:port`) of the master the client's map holds for `key`'s slot. */
  ownerOf(key: string): string | undefined {
    return hasNodes(this.#client) ? this.#client.slots[keySlot(key)]?.master?.address : undefined;
  }

  /**
   * Sends `commands`, refused with `error`, again while redirected (see
   * `retryRedirected`): to the node the answer named, or to the master of
   * `key`'s slot once the map is refreshed. Resolves with the last reply.
   * Without a readable map nothing can be sent by hand: `error` is thrown.
   */
  async resend(error: unknown, key: string, commands: readonly string[][]): Promise<unknown> {
    const cluster = this.#client;
    if (!hasNodes(cluster)) throw error;
    return retryRedirected(error, async (redirection, refusal) => {
      if (redirection.kind !== 'ask') await this.#refresh(key);
      const at = redirection.address ?? this.ownerOf(key);
      const node = at === undefined ? undefined : cluster.nodeByAddress.get(at);
      if (node === undefined) throw refusal;
      return sendTogether(await cluster.nodeClient(node), redirection.kind === 'ask', commands);
    });
  }

  /**
   * Makes the client re-read its slot map if it is stale: `EXISTS <key>`
   * through the client goes to the master its map names, which answers MOVED
   * if the slot has moved, and node-redis then re-reads the map. One at a
   * time: concurrent calls share the refresh in flight.
   */
  #refresh(key: string): Promise<unknown> {
    this.#refreshing ??= this.#client
      .sendCommand(key, false, ['EXISTS', key])
      .catch(() => undefined)
      .finally(() => {
        this.#refreshing = undefined;
      });
    return this.#refreshing;
  }

  /**
   * Sends `EXISTS <stuck key>` through the client, routed to a master that
   * (by the client's map) does not hold the key's slot: it answers MOVED with
   * whatever the cluster now says, and node-redis re-reads its slot map. For
   * a master that died: its own connection answers nothing.
   */
  async refreshElsewhere(stuckKey: string): Promise<void> {
    if (!hasNodes(this.#client)) return;
    const stuckAt = this.ownerOf(stuckKey);
    for (let i = 0; i < 64; i++) {
      const routingKey = String(i);
      if (this.ownerOf(routingKey) === stuckAt) continue;
      await this.#client.sendCommand(routingKey, false, ['EXISTS', stuckKey]).catch(() => undefined);
      return;
    }
  }
}

/**
 * Sends `commands` (after `ASKING` when asked) to one node in one turn of the
 * event loop, so that nothing comes between them in its connection's queue.
 * Resolves with the last reply; rejects with the first error (an ASK or MOVED
 * before EXEC's EXECABORT).
 */
async function sendTogether(node: NodeConnection, asking: boolean, commands: readonly string[][]): Promise<unknown> {
  const sent = (asking ? [['ASKING'], ...commands] : commands).map((command) => node.sendCommand(command));
  const outcomes = await Promise.allSettled(sent);
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return (outcomes[outcomes.length - 1] as PromiseFulfilledResult<unknown>).value;
}
