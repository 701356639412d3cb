/**
 * What a limiter limits: usually a user id. A string (not empty), or a finite
 * number that stands for its decimal string (`42` and `'42'` are the same id).
 */
export type LimiterId = string | number;

/** Normalizes an id to its string form, or throws a `TypeError` naming what was received. */
export function normalizeId(id: unknown): string {
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  const received =
    typeof id === 'string' ? 'an empty string' : typeof id === 'number' ? `\`${id}\` (number)` : `a value of type ${id === null ? 'null' : typeof id}`;
  throw new TypeError(`Expected the id to be a non-empty string or a finite number, got ${received}`);
}
