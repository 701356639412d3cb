// Reading the caller's options by their own properties only. An option that
// an object inherits, from its class or from a polluted `Object.prototype`
// (`Object.prototype.countBlocked = false`), is not the caller's choice and
// must not change what a limiter does.

/**
 * The caller's options object as the checks read it: a snapshot of its own
 * properties (each read once, enumerable or not, as it was), on a null
 * prototype, so that nothing inherited is read as an option. Anything that is
 * not a plain options object (`undefined`, `null`, an array, a function, a
 * primitive) is returned as it is, for the checks to refuse or accept it.
 * The caller's object is never touched.
 */
export function ownOptions<T>(given: T): T {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return given;
  const own = Object.create(null) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(given)) {
    const value: unknown = (given as Record<string, unknown>)[name];
    Object.defineProperty(own, name, { value, enumerable: Object.prototype.propertyIsEnumerable.call(given, name), writable: false });
  }
  return own as T;
}

/** The caller's own option `name` of `given` (per-call options such as `{ actionId }`); undefined when it is inherited or absent. */
export function ownOption(given: unknown, name: string): unknown {
  return typeof given === 'object' && given !== null && Object.hasOwn(given, name) ? (given as Record<string, unknown>)[name] : undefined;
}
