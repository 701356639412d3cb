// The adapter for node-redis (`redis` 4 and 5) cluster clients. Every call is
// routed by its first key, and the client's own redirection handling stays in
// charge where it works: single commands (the scripts) follow MOVED and ASK.
// Where it does not, this adapter finishes the job:
//
// - node-redis sends a MULTI straight to the master its slot map names and
//   follows neither MOVED nor ASK for it (v5), or sees only EXEC's
//   EXECABORT (v4); and it refreshes its slot map only when a single command
//   meets MOVED. So once a slot had moved, every MULTI for it failed.
// - A multi-key script meets TRYAGAIN while its slot is being migrated (its
//   keys are split between two masters), which no client retries.
// - v4 sends ASKING apart from the command it is for, so under concurrency
//   another command can take the ASKING and the command is refused.
//
// On such an answer the adapter refreshes the client's slot map and sends the
// call again itself (ClusterSlotMap.resend). And since node-redis waits
// forever on a master that died, it watches its calls and has the slot map
// re-read through a live master when they stall (cluster-stall-watch.ts).

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
      return this.#stalls.watch(key, sent.catch((error: unknown) => this.#slots.resend(error, key, [command])));
    });
  }
}

/** True when a node-redis client is a cluster client (it knows its masters). */
export function isNodeRedisCluster(client: object): client is NodeRedisLikeCluster {
  return 'masters' in client;
}
