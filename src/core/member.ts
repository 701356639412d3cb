import { randomBytes } from 'node:crypto';

// Sorted-set members must be unique per attempt, even when two attempts share
// a microsecond, and short, because every byte is paid for in Redis memory.
// A member is a random tag fixed for this process (8 base-36 characters,
// about 41 bits) followed by a counter in base 36: typically 9 to 12 bytes,
// against 36 for a UUID. Within a process the counter makes members unique;
// across processes the tag does, with overwhelming probability.

function randomTag(): string {
  const bytes = randomBytes(8);
  let tag = '';
  for (const byte of bytes) tag += (byte % 36).toString(36);
  return tag;
}

const processTag = randomTag();
let counter = 0;

/** A new member for a sorted set: unique within this process, and across processes with high probability. */
export function nextMember(): string {
  counter += 1;
  return processTag + counter.toString(36);
}
