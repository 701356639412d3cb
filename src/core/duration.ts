// Durations as options: milliseconds as a number, or a string with its unit
// written out ('500ms', '10s', '1m', '1h', '1d'), so that the unit is visible
// where the option is written and `interval: 60` is not mistaken for a
// minute. Strings are read once, when the options are normalized.

import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { describeValue } from './describe-value.js';

/** The units a duration string may carry: milliseconds, seconds, minutes, hours, days. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

/**
 * A duration: a number of milliseconds, or a number followed by its unit,
 * without spaces: `'500ms'`, `'10s'`, `'1.5s'`, `'1m'`, `'1h'`, `'1d'`.
 * TypeScript checks the form of a literal (`'10 s'` and `'10sec'` do not
 * compile); a string built at run time that does not read as a duration is a
 * `TypeError` naming the option.
 */
export type Duration = number | `${number}${DurationUnit}`;

const UNIT_MS: Readonly<Record<DurationUnit, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/**
 * Reads a duration option: a number is returned as it is (its range is
 * checked by the caller); a string is converted to milliseconds.
 *
 * @throws TypeError ({@link InvalidOptionTypeError}) when a string does not read as a duration.
 */
export function durationToMilliseconds(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = DURATION_PATTERN.exec(value);
  if (match === null) {
    throw new InvalidOptionTypeError(
      `Expected \`${name}\` to be a number of milliseconds or a duration such as '500ms', '10s', '1m', '1h' or '1d', got ${describeValue(value)}`,
      name,
      value,
    );
  }
  const milliseconds = Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
  // 1.1s is 1100 ms, not 1100.0000000000002: round away binary noise, keep real fractions (0.5ms) for the range check.
  const rounded = Math.round(milliseconds * 1e6) / 1e6;
  return rounded;
}
