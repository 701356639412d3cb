import { escapeIdentifier } from './keys.js';

// Action ids: an optional id per attempt (a job id, a notification id) that
// makes retries idempotent and admitted actions refundable. The recorded
// member of an attempt with an action id is the id itself, marked with
// whether the action was admitted; the members of attempts without one
// (a random tag and a counter, see member.ts) never start with either mark.

/**
 * The form an action id is stored in: escaped as key parts are, so that
 * action ids that differ only in a lone surrogate (`job-\uD800`,
 * `job-\uFFFD`) stay distinct members in Redis.
 */
export function storedActionId(actionId: string): string {
  return escapeIdentifier(actionId);
}

/** The member of an admitted action (its id as stored). */
export function admittedMember(actionId: string): string {
  return `+${actionId}`;
}

/** The member of an action (its id as stored) that was recorded while blocked (with `countBlocked: true`). */
export function blockedMember(actionId: string): string {
  return `-${actionId}`;
}

/** Options of one attempt. */
export interface AttemptOptions {
  /**
   * Makes the attempt idempotent: an action id that was already admitted (and
   * is still in the window) is answered as admitted again and counted only
   * once, so a retried job does not use up a second slot; an earlier blocked
   * attempt with the same id is replaced, not counted twice. Use `undo` to
   * give an admitted action back. Needs the decide script on Redis (not
   * redis-mock).
   */
  readonly actionId?: string;
}

/** Validates an action id: a non-empty string. */
export function normalizeActionId(actionId: unknown): string | undefined {
  if (actionId === undefined) return undefined;
  if (typeof actionId === 'string' && actionId !== '') return actionId;
  throw new TypeError(`Expected \`actionId\` to be a non-empty string, got ${typeof actionId === 'string' ? 'an empty string' : typeof actionId}`);
}
