// How an option checker names the value it received, in every error message
// of the form "Expected `x` to be ..., got <value>". A module of its own, at
// the bottom of the core, so that every layer's option checks can use it
// without importing the options module.

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
