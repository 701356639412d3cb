// A script call's layout as data: the fields of its KEYS and ARGV, in order,
// each with how TypeScript encodes it and how the Lua reads it, and the named
// values of its reply, each with when it is there. The encoder, the Lua names
// of the offsets, the Lua that writes the reply, and the decoder are all
// derived from the same lists, so an offset is written once: by a field's
// place in its list.

import type { Presence, ReplyValue } from './decide-reply.js';

/** How the script reads an argument: a number (the decision is refused when it is not one), a flag ('1' is true), or the text as sent. */
export type Reading = 'number' | 'flag' | 'text';

/** One argument (or key) of a script call: its name in the Lua, how the Lua reads it, and its value from `Source`. */
export type Field<Source> =
  | { readonly name: string; readonly reading: 'number'; readonly encode: (source: Source) => number }
  | { readonly name: string; readonly reading: 'flag'; readonly encode: (source: Source) => boolean }
  | { readonly name: string; readonly reading: 'text'; readonly encode: (source: Source) => string | number };

/** A field the Lua reads as a number (`+ 0`): the codec sends only numbers, and a call with another value fails as a whole. */
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
 * The Lua expressions, comma-separated, that read one part of a call from
 * ARGV, its fields starting after `at` (a Lua expression), each as its
 * reading says: a number (`+ 0`), a flag (`== '1'`) or the text, in the
 * order of the list: `{ ${luaReadFields(...)} }` builds an array that the
 * part's offsets index (`rule[rule_max]`), with no string keys to hash.
 */
export function luaReadFields(part: string, fields: readonly Field<never>[], at: string): string {
  const read = (field: Field<never>): string => {
    const argument = `ARGV[${at} + ${part}_${field.name}]`;
    if (field.reading === 'number') return `${argument} + 0`;
    return field.reading === 'flag' ? `${argument} == '1'` : argument;
  };
  return fields.map(read).join(', ');
}

/** The Lua places, comma-separated, of one part's fields in `table` after `at`: `rules[o + rule_interval], ...`, to assign {@link luaReadFields} to. */
export function luaFieldSlots(part: string, fields: readonly { readonly name: string }[], table: string, at: string): string {
  return fields.map((field) => `${table}[${at} + ${part}_${field.name}]`).join(', ');
}

/**
 * The Lua statements that append the values of one part of the reply (or of
 * parts in a row), in order, to the script's `reply` after its last value
 * `r`, each from the local variable of its name, and each that is not always
 * there only where the Lua boolean named after its presence is true
 * (`readsNewest`), or not at all where that presence is among `absent` (known
 * false where the statements stand); each line indented by `indent`. Written
 * in place rather than as a function, which the script would build anew on
 * every call.
 */
export function luaAppend(parts: readonly ReplyValue[], indent = '', absent: readonly Presence[] = []): string {
  const part = parts.filter((value) => !absent.includes(value.when));
  const lines: string[] = [];
  for (let i = 0; i < part.length; ) {
    // Values in a row that are there under the same condition go in one statement.
    const { when } = part[i] as ReplyValue;
    let end = i;
    while (end < part.length && (part[end] as ReplyValue).when === when) end += 1;
    const names = part.slice(i, end).map((v) => v.name);
    const append = [`${names.map((_, j) => `reply[r + ${j + 1}]`).join(', ')} = ${names.join(', ')}`, `r = r + ${names.length}`];
    lines.push(...(when === 'always' ? append : [`if ${when} then`, ...append.map((line) => `  ${line}`), 'end']));
    i = end;
  }
  return lines.map((line) => indent + line).join('\n');
}

/** A reply being read: its values, and where the next one is. */
export interface ReplyCursor {
  readonly values: readonly number[];
  at: number;
}

/**
 * Reads one part of a reply at the cursor, and moves it past: each value of
 * `part` in order, where `present` says it is there (given the values read
 * before it), else -1.
 */
export function decodeValues<Name extends string>(
  part: readonly ReplyValue<Name>[],
  cursor: ReplyCursor,
  present: (when: Presence, decoded: Readonly<Record<Name, number>>) => boolean,
): Record<Name, number> {
  const decoded = {} as Record<Name, number>;
  for (const { name, when } of part) {
    decoded[name] = when === 'always' || present(when, decoded) ? (cursor.values[cursor.at++] as number) : -1;
  }
  return decoded;
}
