// The adapter for node-redis (`redis` 4 and 5) cluster clients. Every call is
// routed by its first key; single commands (the scripts) follow MOVED and ASK
// in the client. What node-redis leaves undone (docs/guides/redis-cluster.md,
// "Resharding" and "When a master fails"), the adapter does: a MULTI
// refused (v5: MOVED, ASK; v4: EXECABORT) or a TRYAGAIN is sent again by
// ClusterSlotMap.resend, which also queues ASKING right before its command
// (v4 sends it apart, where another command can take it); and calls to a dead
// master are watched (cluster-stall-watch.ts).

import type { ConnectionProblem } from '../../errors/timeout-error.js';
import type { RedisAdapter } from './adapter.js';
import type { NodeRedisLikeCluster, RedisCommand } from './client-types.js';
import { ClusterSlotMap } from './cluster-slot-map.js';
import { StallWatch } from './cluster-stall-watch.js';
import { execReplies } from './exec-replies.js';
import { StringCommandAdapter, stringsOf } from './node-redis-commands.js';
import { nodeRedisConnectionProblem, whenOpen } from './node-redis-adapter.js';

/**
 * {@link RedisAdapter} for a node-redis (`redis` v4 or v5) cluster client made
 * by `createCluster`. Every call is routed by its first key; a call refused
 * because its slot moved or is moving is sent again where the slot now is.
 */
export class NodeRedisClusterAdapter extends StringCommandAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeCluster;
  readonly kind = 'node-redis cluster';
  readonly isCluster = true;
  readonly #slots: ClusterSlotMap;
  readonly #stalls: StallWatch;

  constructor(client: NodeRedisLikeCluster) {
    super();
    this.client = client;
    this.#slots = new ClusterSlotMap(client);
    this.#stalls = new StallWatch((stuckKey) => this.#slots.refreshElsewhere(stuckKey));
  }

  /** The address (`host:port`) of the master node-redis's slot map holds for the key's slot. */
  slotOwner(key: string): string | undefined {
    return this.#slots.ownerOf(key);
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    return whenOpen(this.client, this.kind, () => {
      const key = String(commands[0]?.[1]);
      const multi = this.client.multi(key);
      // v4: addCommand(firstKey, args); v5: addCommand(firstKey, isReadonly, args).
      const takesReadonlyFlag = multi.addCommand.length >= 4;
      for (const command of commands) {
        const args = stringsOf(command);
        if (takesReadonlyFlag) multi.addCommand(key, false, args);
        else multi.addCommand(key, args);
      }
      const replies = multi
        .exec()
        .then(execReplies, (error: unknown) => this.#slots.resend(error, key, [['MULTI'], ...commands.map(stringsOf), ['EXEC']]).then(execReplies));
      return this.#stalls.watch(key, replies);
    });
  }

  /** What the client shows: only whether it is open (a cluster client has a connection per node). */
  connectionProblem(): ConnectionProblem | undefined {
    return nodeRedisConnectionProblem(this.kind, { isOpen: this.client.isOpen }, (summary) => ({ summary }));
  }

  protected send(command: string[], key: string | undefined): Promise<unknown> {
    return whenOpen(this.client, this.kind, () => {
      const sent = this.client.sendCommand(key, false, command);
      if (key === undefined) return sent;
      return this.#stalls.watch(
        key,
        sent.catch((error: unknown) => this.#slots.resend(error, key, [command])),
      );
    });
  }
}

/** True when a node-redis client is a cluster client (it knows its masters). */
export function isNodeRedisCluster(client: object): client is NodeRedisLikeCluster {
  return 'masters' in client;
}
