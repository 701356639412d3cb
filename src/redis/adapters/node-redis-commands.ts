// Commands as node-redis and GLIDE send them: every argument a string.

import type { RedisCommand } from './client-types.js';

/** The command itself when it holds only strings (as the MULTI path of `limit()` builds it), else a copy with numbers spelled out. */
export function stringsOf(command: RedisCommand): string[] {
  for (const arg of command) if (typeof arg !== 'string') return command.map(String);
  return command as readonly string[] as string[];
}

/** The script calls (and keyless commands) of an adapter whose client sends commands of strings (node-redis, GLIDE): `send` routes each by its first key. */
export abstract class StringCommandAdapter {
  readonly supportsScripts = true;

  /** `EVALSHA <sha1> <numkeys> <keys…> <args…>`, every argument a string. */
  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.send(['EVALSHA', sha1, String(keys.length), ...keys, ...args.map(String)], keys[0]);
  }

  /** `EVAL <script> <numkeys> <keys…> <args…>`, every argument a string. */
  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.send(['EVAL', lua, String(keys.length), ...keys, ...args.map(String)], keys[0]);
  }

  /** Sends one command that names no key, every argument a string: on a Cluster, to the node the client picks. */
  serverCommand(command: RedisCommand): Promise<unknown> {
    return this.send(stringsOf(command), undefined);
  }

  /** Sends one command, to the node that holds `key` on a Cluster. */
  protected abstract send(command: string[], key: string | undefined): Promise<unknown>;
}
