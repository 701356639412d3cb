// A script call's layout as data: the fields of its KEYS and ARGV, in order,
// each with how TypeScript encodes it and how the Lua reads it, and the named
// values of its reply. The encoder, the Lua names of the offsets, the Lua that
// writes the reply, and the decoder are all derived from the same lists, so
// an offset is written once: by a field's place in its list.

/** How the script reads an argument: a number (the decision is refused when it is not one), a flag ('1' is true), or the text as sent. */
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

/**
 * The Lua text that names the place of each field of one part of a call
 * (`<part>_<field>`, counted from 1 after the part's start), and the part's
 * width (`<part>_width`): `local header_now, header_member = 2, 3`. The Lua
 * then reads `ARGV[a + header_now]`: an offset is written once, by the
 * field's place in its list, and no table is built per decision.
 */
export function luaOffsets(part: string, fields: readonly { readonly name: string }[]): string {
  const names = fields.map((field) => `${part}_${field.name}`).join(', ');
  const places = fields.map((_, i) => i + 1).join(', ');
  return `local ${names} = ${places}\nlocal ${part}_width = ${fields.length}`;
}

/**
 * The Lua statements that append the local variables named by `names`, in
 * order, to the script's `reply` after its last value `r`, then -1 until
 * `width` values are written, each line indented by `indent`: written in
 * place rather than as a function, which the script would build anew on
 * every call.
 */
export function luaAppend(names: readonly string[], width: number = names.length, indent = ''): string {
  const slots = Array.from({ length: width }, (_, i) => `reply[r + ${i + 1}]`);
  const values = Array.from({ length: width }, (_, i) => names[i] ?? '-1');
  return `${indent}${slots.join(', ')} = ${values.join(', ')}\n${indent}r = r + ${width}`;
}

/** The values of a reply named by `names`, read from `values` at `at`. */
export function decodeFields<Name extends string>(names: readonly Name[], values: readonly number[], at: number): Record<Name, number> {
  const decoded = {} as Record<Name, number>;
  names.forEach((name, i) => {
    decoded[name] = values[at + i] as number;
  });
  return decoded;
}
