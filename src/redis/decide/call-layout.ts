// A script call's layout as data: the fields of its KEYS and ARGV, in order,
// each with how TypeScript encodes it and how the Lua reads it, and the named
// values of its reply. The encoder, the Lua that reads the arguments into a
// table keyed by field name, the Lua that writes the reply, and the decoder
// are all derived from the same lists, so an offset is written once: by a
// field's place in its list.

/** How the script reads an argument: a number (nil when it is not one), a flag ('1' is true), or the text as sent. */
export type Reading = 'number' | 'flag' | 'text';

/** One argument (or key) of a script call: its name in the Lua, how the Lua reads it, and its value from `Source`. */
export type Field<Source> =
  | { readonly name: string; readonly reading: 'number'; readonly encode: (source: Source) => number }
  | { readonly name: string; readonly reading: 'flag'; readonly encode: (source: Source) => boolean }
  | { readonly name: string; readonly reading: 'text'; readonly encode: (source: Source) => string | number };

/** A field the Lua reads with `tonumber`: the script refuses the call's decision when it is not a number. */
export function numberField<Source>(name: string, encode: (source: Source) => number): Field<Source> {
  return { name, reading: 'number', encode };
}

/** A field sent as '1' or '0', read in the Lua as a boolean. */
export function flagField<Source>(name: string, encode: (source: Source) => boolean): Field<Source> {
  return { name, reading: 'flag', encode };
}

/** A field sent and read as it is. */
export function textField<Source>(name: string, encode: (source: Source) => string | number): Field<Source> {
  return { name, reading: 'text', encode };
}

/** A key of a script call: text, sent and read as it is. */
export interface KeyField<Source> {
  readonly name: string;
  readonly reading: 'text';
  readonly encode: (source: Source) => string;
}

/** A key, read in the Lua from KEYS. */
export function keyField<Source>(name: string, encode: (source: Source) => string): KeyField<Source> {
  return { name, reading: 'text', encode };
}

/** Appends the keys of `fields` for `source`, in order, to `keys`. */
export function encodeKeys<Source>(keys: string[], fields: readonly KeyField<Source>[], source: Source): void {
  for (const field of fields) keys.push(field.encode(source));
}

/** Appends the values of `fields` for `source`, in order, to `values`. */
export function encodeFields<Source>(values: (string | number)[], fields: readonly Field<Source>[], source: Source): void {
  for (const field of fields) {
    if (field.reading === 'flag') values.push(field.encode(source) ? '1' : '0');
    else values.push(field.encode(source));
  }
}

/** Where a reader finds its fields: KEYS or ARGV, after the offset its Lua parameter `offset` names. */
export interface LuaSource {
  readonly array: 'KEYS' | 'ARGV';
  readonly offset: string;
  readonly fields: readonly Field<never>[];
}

/**
 * The Lua text of `local function <name>(<offsets>)`, which reads each source's
 * fields from its array, the first at `<offset> + 1`, into one table keyed by
 * field name, and returns nil when a number field is not a number.
 */
export function luaReader(name: string, sources: readonly LuaSource[]): string {
  const entries = sources.flatMap(({ array, offset, fields }) =>
    fields.map((field, i) => `    ${field.name} = ${luaRead(field.reading, `${array}[${offset} + ${i + 1}]`)},`),
  );
  const numbers = sources.flatMap(({ fields }) => fields.filter((field) => field.reading === 'number').map((field) => `t.${field.name}`));
  return [
    `local function ${name}(${sources.map((source) => source.offset).join(', ')})`,
    '  local t = {',
    ...entries,
    '  }',
    numbers.length === 0 ? '  return t' : `  if ${numbers.join(' and ')} then return t end`,
    'end',
  ].join('\n');
}

function luaRead(reading: Reading, slot: string): string {
  if (reading === 'number') return `tonumber(${slot})`;
  if (reading === 'flag') return `${slot} == '1'`;
  return slot;
}

/**
 * The Lua text of `local function <name>(<names>)`, which appends its
 * arguments, in order, to the script's `reply` after its last value `r`,
 * then -1 until `width` values are written.
 */
export function luaWriter(name: string, names: readonly string[], width: number = names.length): string {
  const padding = width > names.length ? [`  for j = ${names.length + 1}, ${width} do reply[r + j] = -1 end`] : [];
  return [
    `local function ${name}(${names.join(', ')})`,
    ...names.map((field, i) => `  reply[r + ${i + 1}] = ${field}`),
    ...padding,
    `  r = r + ${width}`,
    'end',
  ].join('\n');
}

/** The values of a reply named by `names`, read from `values` at `at`. */
export function decodeFields<Name extends string>(names: readonly Name[], values: readonly number[], at: number): Record<Name, number> {
  const decoded = {} as Record<Name, number>;
  names.forEach((name, i) => {
    decoded[name] = values[at + i] as number;
  });
  return decoded;
}
