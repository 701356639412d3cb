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

function readScore(reply: unknown, what: string, whole: unknown): number {
  const score = typeof reply === 'string' ? Number(reply) : reply;
  if (typeof score !== 'number' || !Number.isFinite(score)) throw unexpected(what, whole);
  return score;
}

/**
 * Reads a `ZRANGE ... WITHSCORES` reply, in either shape clients give it: a
 * flat `[member, score, member, score]` array (RESP2) or an array of
 * `[member, score]` pairs (RESP3).
 */
export function readScoredMembers(reply: unknown, what: string): ScoredMember[] {
  if (!Array.isArray(reply)) throw unexpected(what, reply);
  const entries: ScoredMember[] = [];
  if (reply.length > 0 && Array.isArray(reply[0])) {
    for (const pair of reply) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') throw unexpected(what, reply);
      entries.push({ member: pair[0], score: readScore(pair[1], what, reply) });
    }
    return entries;
  }
  if (reply.length % 2 !== 0) throw unexpected(what, reply);
  for (let i = 0; i < reply.length; i += 2) {
    const member: unknown = reply[i];
    if (typeof member !== 'string') throw unexpected(what, reply);
    entries.push({ member, score: readScore(reply[i + 1], what, reply) });
  }
  return entries;
}
