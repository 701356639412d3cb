// The Redis key of an id under a namespace, as the README documents it
// ("Key format"), written from that text rather than taken from the library: tests
// that look at what a limiter stored in Redis find the key this way, and so
// also check that the documented format holds.
//
// A key is `<namespace>:{<id>}`. In both parts `%`, `{`, `}` and `:` are
// escaped as `%25`, `%7B`, `%7D`, `%3A`, and a lone UTF-16 surrogate as
// `%uD800`-style text; a well-formed surrogate pair stays as it is.

const ESCAPES: Readonly<Record<string, string>> = { '%': '%25', '{': '%7B', '}': '%7D', ':': '%3A' };

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

function escapePart(part: string): string {
  let escaped = '';
  for (let i = 0; i < part.length; i += 1) {
    const code = part.charCodeAt(i);
    if (isHighSurrogate(code) && isLowSurrogate(part.charCodeAt(i + 1))) {
      escaped += part.slice(i, i + 2);
      i += 1;
    } else if (isHighSurrogate(code) || isLowSurrogate(code)) {
      escaped += `%u${code.toString(16).toUpperCase()}`;
    } else {
      const char = part.charAt(i);
      escaped += ESCAPES[char] ?? char;
    }
  }
  return escaped;
}

/** The key a limiter with this `namespace` keeps `id` under (the id as a string, as the limiter normalizes it). */
export function keyOf(namespace: string, id: string): string {
  return `${escapePart(namespace)}:{${escapePart(id)}}`;
}

/**
 * The lowest score of a record: a stamp in microseconds is never below 10^15 (in 2001). What a key holds below it is
 * its horizon mark (`#count` or `#cost`, docs/guides/how-it-works-on-redis.md), which tests that count or read
 * records leave out: `ZCOUNT key RECORDS_FROM +inf`, `ZRANGEBYSCORE key RECORDS_FROM +inf`.
 */
export const RECORDS_FROM = '1000000000000000';

/** How many records (not the mark) an ioredis-like client finds under `key`. */
export function recordCount(client: { zcount(key: string, min: string, max: string): Promise<number> }, key: string): Promise<number> {
  return client.zcount(key, RECORDS_FROM, '+inf');
}
