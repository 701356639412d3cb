// Options that are valid but probably a mistake, warned about rather than
// refused, as express-rate-limit's validations do: once per process for each
// kind, with a stable code, and a `validate` option that turns them off. A bare
// number is milliseconds, so `interval: 60` (meant as a minute) is a 60 ms
// window, and `minDifference: 3` (meant as 3 s) a 3 ms gap: both limit
// nothing a user would notice, silently.

import { boolean, describeValue, normalize, optional, type Check } from '../core/check.js';
import { warnOnce } from '../core/diagnostics.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { ownOptions } from './own-options.js';

/** Codes of the warnings about options (`warning.code`, `process.on('warning')`, and the warning channel). */
export const OPTION_WARNING_CODES = {
  /** `interval` was a bare number under 1000: milliseconds, where seconds were probably meant (`interval: 60`). */
  smallInterval: 'RATE_LIMITER_SMALL_INTERVAL',
  /** `minDifference` was a bare number from 1 to 9: milliseconds, where seconds were probably meant (`minDifference: 3`). */
  smallMinDifference: 'RATE_LIMITER_SMALL_MIN_DIFFERENCE',
} as const;

/** The least bare `interval` that is not warned about: a window under a second is rare, and `60` is usually a minute. */
const LEAST_UNWARNED_INTERVAL = 1000;
/** The least bare `minDifference` (above 0, which is no gap) that is not warned about: `3` is usually 3 seconds. */
const LEAST_UNWARNED_MIN_DIFFERENCE = 10;

/** Which warnings are on, after the `validate` option. */
export type NormalizedValidate = { readonly [Name in keyof typeof OPTION_WARNING_CODES]: boolean };

const VALIDATE_SCHEMA = { smallInterval: optional(boolean, true), smallMinDifference: optional(boolean, true) };
const ALL_ON: NormalizedValidate = Object.freeze({ smallInterval: true, smallMinDifference: true });
const ALL_OFF: NormalizedValidate = Object.freeze({ smallInterval: false, smallMinDifference: false });

/** The `validate` option: `true` (the default) or `false` for every warning, or an object of them, each `true` unless `false`. */
export const validateOption: Check<NormalizedValidate> = (value, name) => {
  if (value === undefined || value === true) return ALL_ON;
  if (value === false) return ALL_OFF;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionTypeError(
      `Expected \`${name}\` to be a boolean or an object such as { smallInterval: false }, got ${describeValue(value)}`,
      name,
      value,
    );
  }
  return normalize(ownOptions(value), VALIDATE_SCHEMA, `\`${name}\``, { prefix: `${name}.` });
};

/** A warning that a limiter's options call for, before it is given. */
export interface OptionWarning {
  readonly code: string;
  readonly message: string;
}

/**
 * The warnings the durations as given call for (only bare numbers: a string carries its unit), as `validate`
 * leaves them on.
 */
export function durationWarnings(interval: unknown, minDifference: unknown, validate: NormalizedValidate): OptionWarning[] {
  const warnings: OptionWarning[] = [];
  if (validate.smallInterval && typeof interval === 'number' && interval < LEAST_UNWARNED_INTERVAL) {
    warnings.push({ code: OPTION_WARNING_CODES.smallInterval, message: bareNumberMessage('interval', interval, 'smallInterval') });
  }
  if (validate.smallMinDifference && typeof minDifference === 'number' && minDifference > 0 && minDifference < LEAST_UNWARNED_MIN_DIFFERENCE) {
    warnings.push({ code: OPTION_WARNING_CODES.smallMinDifference, message: bareNumberMessage('minDifference', minDifference, 'smallMinDifference') });
  }
  return warnings;
}

function bareNumberMessage(option: string, value: number, check: keyof NormalizedValidate): string {
  return (
    `\`${option}: ${value}\` is ${value} milliseconds (a number is milliseconds): did you mean '${value}s'? ` +
    `Write \`${option}: '${value}s'\` for seconds, or \`${option}: '${value}ms'\` to keep ${value} ms without this warning ` +
    `(\`validate: { ${check}: false }\` turns it off too).`
  );
}

/** Gives each warning, once per code in this process; `store` names what holds the limiter's state (the warning channel's `store`). */
export function giveWarnings(warnings: readonly OptionWarning[], store: string): void {
  for (const { code, message } of warnings) warnOnce(code, message, store);
}
