// Strict readers of Redis replies. A reply of an unexpected shape is a loud
// StoreError, never a silent allow: a client whose replies are misread must
// not quietly stop limiting.

import { StoreError } from '../errors/store-error.js';

/** One sorted-set entry as read back from Redis. */
export interface ScoredMember {
  readonly member: string;
  readonly score: number;
}

function unexpected(what: string, reply: unknown): StoreError {
  let shown: string;
  try {
    shown = JSON.stringify(reply)?.slice(0, 120) ?? String(reply);
  } catch {
    shown = String(reply);
  }
  return new StoreError(`Unexpected reply to ${what} from Redis: ${shown}`);
}

/** Reads an integer reply (RESP2 integer, or its string form). */
export function readInteger(reply: unknown, what: string): number {
  const value = typeof reply === 'string' && reply !== '' ? Number(reply) : reply;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw unexpected(what, reply);
  return value;
}

/**
 * Reads a `ZRANGE ... WITHSCORES` reply, in either shape clients give it: a
 * flat `[member, score, member, score]` array (RESP2) or an array of
 * `[member, score]` pairs (RESP3).
 */
export function readScoredMembers(reply: unknown, what: string): ScoredMember[] {
  if (!Array.isArray(reply)) throw unexpected(what, reply);
  const items: unknown[] = reply;
  const pairs = Array.isArray(items[0]) ? items : Array.from({ length: Math.ceil(items.length / 2) }, (_, i) => items.slice(2 * i, 2 * i + 2));
  return pairs.map((pair) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') throw unexpected(what, reply);
    const score: unknown = typeof pair[1] === 'string' ? Number(pair[1]) : pair[1];
    if (typeof score !== 'number' || !Number.isFinite(score)) throw unexpected(what, reply);
    return { member: pair[0], score };
  });
}
