// Option checking for every constructor of the library: the checks of one
// value, and `normalize`, which checks an options object against a schema of
// them. Each public entry declares its schema and defaults in `options/`.

import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';

/** Renders a received value for an error message: `0` (number), `'x'` (string), `null`. */
export function describeValue(value: unknown): string {
  if (value === null) return '`null`';
  if (typeof value === 'string') return `\`${JSON.stringify(value).slice(0, 60)}\` (string)`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `an object (${Object.prototype.toString.call(value)})`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return `\`${String(value)}\` (${typeof value})`;
  }
  return typeof value === 'symbol' ? `\`${value.toString()}\` (symbol)` : '`undefined`';
}

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

/** Checks one option's value and returns it as the library keeps it; `name` is the option's name in messages. */
export type Check<T> = (value: unknown, name: string) => T;

/** The most milliseconds a window may last (about 31 years). */
export const MAX_MILLISECONDS = 1e12;
/** The largest count or timer delay the library takes (2^31 - 1). */
export const MAX_INTEGER = 2 ** 31 - 1;

function typeError(name: string, expected: string, value: unknown): InvalidOptionTypeError {
  return new InvalidOptionTypeError(`Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`, name, value);
}

function rangeError(name: string, expected: string, value: unknown, extra = ''): InvalidOptionRangeError {
  return new InvalidOptionRangeError(`Expected \`${name}\` to be ${expected}, got ${describeValue(value)}${extra}`, name, value);
}

/** A number from `min` to `max`: fractions allowed, unless `whole`. */
export function numberIn(min: number, max: number, whole = false): Check<number> {
  const expected = `${whole ? 'an integer' : 'a number'} from ${min} to ${max}`;
  return (value, name) => {
    if (typeof value !== 'number') throw typeError(name, expected, value);
    if (!(value >= min && value <= max) || (whole && !Number.isInteger(value))) throw rangeError(name, expected, value);
    return value;
  };
}

/** An integer from `min` to `max`. */
export function integer(min: number, max: number): Check<number> {
  return numberIn(min, max, true);
}

/**
 * Milliseconds from a {@link Duration}: a number is taken as it is, a string
 * is read with its unit; the result must be a whole number from `min` to
 * `max` (`Infinity` allowed as `max` for "no limit").
 */
export function duration(min: number, max: number): Check<number> {
  return (value, name) => {
    const expected = `a whole number of milliseconds from ${min} to ${max}, or a duration such as '500ms', '10s', '1m', '1h' or '1d'`;
    if (typeof value === 'number') {
      if ((value === Infinity && max === Infinity) || (Number.isInteger(value) && value >= min && value <= max)) return value;
      throw rangeError(name, expected, value);
    }
    if (typeof value !== 'string') throw typeError(name, expected, value);
    const match = DURATION_PATTERN.exec(value);
    if (match === null) throw typeError(name, expected, value);
    // 1.1s is 1100 ms, not 1100.0000000000002: round away binary noise, keep real fractions (0.5ms) for the range check.
    const milliseconds = Math.round(Number(match[1]) * UNIT_MS[match[2] as DurationUnit] * 1e6) / 1e6;
    if (!Number.isInteger(milliseconds) || milliseconds < min || milliseconds > max) throw rangeError(name, expected, value, ` (${milliseconds} ms)`);
    return milliseconds;
  };
}

/** Every duration the library can read: whole milliseconds from 0 to 10^12. */
const anyDuration = duration(0, MAX_MILLISECONDS);

/**
 * Reads a {@link Duration} given as untyped data (a number or a string read
 * from a JSON or YAML file, an environment variable) as the library reads
 * `interval`, `minDifference` and `timeout`: a number is milliseconds, a
 * string is a number followed by its unit (`'500ms'`, `'10s'`, `'1.5m'`,
 * `'1h'`, `'1d'`). The result is a whole number of milliseconds from 0 to
 * 10^12 (about 31 years).
 *
 * @example
 * ```ts
 * parseDuration('30s'); // 30000
 * parseDuration(250); // 250
 * parseDuration('soon', 'routes[2].interval'); // TypeError: Expected `routes[2].interval` to be ... got `"soon"` (string)
 * ```
 *
 * @param value The duration to read.
 * @param name What to call the value in an error message, such as its path in a configuration file.
 * @returns The duration in milliseconds.
 * @throws {@link InvalidOptionTypeError} (a `TypeError`) for a value that is neither a number nor a string of that form.
 * @throws {@link InvalidOptionRangeError} (a `RangeError`) for a negative or fractional number of milliseconds, or more than 10^12.
 */
export function parseDuration(value: unknown, name = 'duration'): number {
  return anyDuration(value, name);
}

/**
 * Whether `value` reads as a {@link Duration}: `true` exactly when
 * {@link parseDuration} would return its milliseconds rather than throw.
 * Narrows untyped data (a string read from JSON is not a `Duration` to
 * TypeScript) without a cast.
 *
 * @example
 * ```ts
 * const interval: unknown = JSON.parse(text).interval;
 * if (isDuration(interval)) new RollingRateLimiter({ interval, maxInInterval: 10 });
 * ```
 */
export function isDuration(value: unknown): value is Duration {
  try {
    anyDuration(value, 'duration');
    return true;
  } catch {
    return false;
  }
}

/** A value `accepts` takes, as it is; `what` says what it should be. */
function ofType<T>(accepts: (value: unknown) => boolean, what: string): Check<T> {
  return (value, name) => {
    if (!accepts(value)) throw typeError(name, what, value);
    return value as T;
  };
}

/** `true` or `false`. */
export const boolean: Check<boolean> = ofType((value) => typeof value === 'boolean', 'a boolean');

/** A string. */
export const string: Check<string> = ofType((value) => typeof value === 'string', 'a string');

/** A string of at least one character; `''` is out of range (a `RangeError`), anything else not a string a `TypeError`. */
export const nonEmptyString: Check<string> = choice((value): value is string => typeof value === 'string' && value !== '', 'a non-empty string');

/** A function (taken as it is). */
export function func<T>(what = 'a function'): Check<T> {
  return ofType((value) => typeof value === 'function', what);
}

/** An object, not null (taken as it is; what it is, the caller checks). */
export function object<T>(what = 'an object'): Check<T> {
  return ofType((value) => typeof value === 'object' && value !== null, what);
}

/**
 * A value `accepts` takes; anything else is `expected` out of range when its
 * type is `rangeType` (a string that names no choice), of the wrong type otherwise.
 */
export function choice<T>(accepts: (value: unknown) => value is T, expected: string, rangeType = 'string'): Check<T> {
  return (value, name) => {
    if (accepts(value)) return value;
    throw (typeof value === rangeType ? rangeError : typeError)(name, expected, value);
  };
}

/** One of `values`; another value of their type is out of range, anything else of the wrong type. */
export function oneOf<T extends string | number | boolean>(values: readonly T[]): Check<T> {
  const expected = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
  return choice((value): value is T => (values as readonly unknown[]).includes(value), `one of ${expected}`, typeof values[0]);
}

/** `first` for a value `accepts` takes, `second` for anything else. */
export function either<A, B>(first: Check<A>, second: Check<B>, accepts: (value: unknown) => boolean): Check<A | B> {
  return (value, name) => (accepts(value) ? first(value, name) : second(value, name));
}

/** `check`, or `fallback` when the option is left out (`undefined`). */
export function optional<T, F extends T | undefined = T>(check: Check<T>, fallback: F): Check<T | F> {
  return (value, name) => (value === undefined ? fallback : check(value, name));
}

/** An option given under its name or its former name (not both), as checked; undefined when neither was given. */
export function renamed<T>(value: T | undefined, former: T | undefined, name: string, formerName: string): T | undefined {
  if (value !== undefined && former !== undefined) {
    throw new InvalidOptionTypeError(`Give \`${name}\` or its former name \`${formerName}\`, not both`, formerName, former);
  }
  return value ?? former;
}

/** A schema: the check of every option an entry takes. */
export type Schema = Readonly<Record<string, Check<unknown>>>;

/** What {@link normalize} returns for a schema: each option as its check returns it. */
export type Normalized<S extends Schema> = { readonly [K in keyof S]: ReturnType<S[K]> };

/**
 * Checks `given` against `schema` without touching it: it must be an object
 * (or `undefined` when `allowMissing`) without keys the schema does not know,
 * and each option passes its check (which fills in its default). `what` and
 * `expected` name the object in messages; `prefix` is put before option names
 * (`'circuitBreaker.'`).
 *
 * @throws {@link InvalidOptionTypeError} (a `TypeError`) for a value of the wrong type, a missing or an unknown option.
 * @throws {@link InvalidOptionRangeError} (a `RangeError`) for a value out of range.
 */
export function normalize<S extends Schema>(
  given: unknown,
  schema: S,
  what: string,
  { prefix = '', allowMissing = false, expected = `${what} to be an object` } = {},
): Normalized<S> {
  if (given === undefined && allowMissing) given = {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidOptionTypeError(`Expected ${expected}, got ${describeValue(given)}`, prefix === '' ? 'options' : prefix.slice(0, -1), given);
  }
  const names = Object.keys(schema);
  for (const [name, value] of Object.entries(given)) {
    if (!names.includes(name)) {
      // A misspelt option would otherwise be ignored without a word.
      throw new InvalidOptionTypeError(`Unknown option \`${prefix}${name}\`; the options are ${names.map((n) => prefix + n).join(', ')}`, prefix + name, value);
    }
  }
  const result: Record<string, unknown> = {};
  // Own properties only: what an object inherits (a polluted Object.prototype) is not an option.
  for (const [name, check] of Object.entries(schema))
    result[name] = check(Object.hasOwn(given, name) ? (given as Record<string, unknown>)[name] : undefined, prefix + name);
  return result as Normalized<S>;
}
