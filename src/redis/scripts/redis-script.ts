import { withNodeBuiltin } from '../../core/node-builtin.js';
import { sha1Hex } from './sha1.js';

/**
 * A Lua script as a reviewed constant: its text, and the SHA1 that `EVALSHA`
 * names it by, computed from the text when first read (not at import) and
 * kept. Inputs always travel in KEYS and ARGV, never by editing the text, so
 * the SHA never changes.
 */
export interface RedisScript {
  /** A short name for error messages. */
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
}

/** What of `node:crypto` hashes a script. */
interface NodeCrypto {
  createHash(this: void, algorithm: 'sha1'): { update(text: string): { digest(encoding: 'hex'): string } };
}

/** Hashes a script's text: Node's `createHash` where the runtime has `node:crypto`, else plain JavaScript (sha1.ts), no import either way. */
let sha1Of = sha1Hex;
withNodeBuiltin<NodeCrypto>('node:crypto', ({ createHash }) => {
  sha1Of = (text) => createHash('sha1').update(text).digest('hex');
});

/** Declares a script; its SHA1 is computed when first read. */
export function defineScript(name: string, lua: string): RedisScript {
  let sha1: string | undefined;
  return {
    name,
    lua,
    get sha1(): string {
      return (sha1 ??= sha1Of(lua));
    },
  };
}
