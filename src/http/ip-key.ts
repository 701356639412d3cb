// The default key of an HTTP request: its client IP, reduced so that one
// client cannot take many limits. An IPv6 client normally holds a whole /64
// (often a /56) and can send from any address in it, so an IPv6 address is
// reduced to its prefix; an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`,
// what a dual-stack socket reports for an IPv4 client) is read as the IPv4
// address it carries. Written with web-standard APIs alone (the WHATWG URL
// parser tells a valid IPv6 address), so that it runs where `node:net` does
// not (Cloudflare Workers, Vercel's edge runtime): no dependency.

import { either, integer, oneOf, optional, type Check } from '../core/check.js';

/** A dotted-quad IPv4 address, as `node:net`'s `isIPv4` reads one: four numbers from 0 to 255, without leading zeros. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Whether `text` is an IPv4 address in dotted-quad form. */
function isIPv4(text: string): boolean {
  return IPV4.test(text);
}

/**
 * Whether `text` is an IPv6 address (with an optional zone index, `fe80::1%eth0`, as `node:net` takes it): the URL
 * parser, which every runtime has, reads the address itself, embedded IPv4 tail and `::` included.
 */
function isIPv6(text: string): boolean {
  const percent = text.indexOf('%');
  const address = percent < 0 ? text : text.slice(0, percent);
  if (percent >= 0 && !/^[0-9A-Za-z.:-]+$/.test(text.slice(percent + 1))) return false;
  if (!address.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(address)) return false;
  try {
    new URL(`http://[${address}]/`);
    return true;
  } catch {
    return false;
  }
}

/** Whether `text` is an IPv4 or IPv6 address. */
function isIP(text: string): boolean {
  return isIPv4(text) || isIPv6(text);
}

/**
 * How much of an IPv6 address identifies one client: a prefix length from 32
 * to 64 (the address is reduced to that prefix), or `false` to key by the
 * whole address.
 */
export type Ipv6Subnet = number | false;

/** The prefix length an IPv6 address is reduced to by default: a /56, what ISPs usually give one customer. */
export const DEFAULT_IPV6_SUBNET = 56;

/**
 * The check of an `ipv6Subnet` option (of the middleware, and of {@link ipKey}):
 * an integer from 32 to 64, or `false`; {@link DEFAULT_IPV6_SUBNET} when left out.
 */
export const ipv6SubnetOption: Check<Ipv6Subnet> = optional(
  either(oneOf([false]), integer(32, 64), (value) => value === false),
  DEFAULT_IPV6_SUBNET,
);

/**
 * The IP address in `address`, without a port a proxy may have written after
 * it: `203.0.113.7:5678` is `203.0.113.7`, `[2001:db8::1]:443` (or
 * `[2001:db8::1]`) is `2001:db8::1`. `undefined` when it is not an IP
 * address, with or without a port.
 */
export function ipWithoutPort(address: string): string | undefined {
  if (isIP(address)) return address;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(address)?.[1];
  if (bracketed !== undefined) return isIPv6(bracketed) ? bracketed : undefined;
  const dotted = /^([\d.]+):\d{1,5}$/.exec(address)?.[1];
  return dotted !== undefined && isIPv4(dotted) ? dotted : undefined;
}

/** The 16 bytes of a valid IPv6 address (zone index dropped). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.split('%', 1)[0] ?? '';
  const bytes = new Uint8Array(16);
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  const groups: number[] = [];
  if (isIPv4(tail)) {
    // An embedded IPv4 address fills the last two groups.
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  groups.push(...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/**
 * The key of a client IP address: an IPv4 address as it is; an IPv4-mapped
 * IPv6 address (`::ffff:a.b.c.d`) as its IPv4 address; any other IPv6
 * address reduced to its first `ipv6Subnet` bits, written as the prefix in
 * CIDR form (`2001:db8:aa:bb00::/56`); with `ipv6Subnet: false`, the whole
 * IPv6 address in its canonical form (`2001:db8::1`, however it was written). Anything that is
 * not an IP address (a Unix socket's empty address, a test's fake) is
 * returned unchanged.
 *
 * @param address The client IP, e.g. Express's `req.ip`.
 * @param ipv6Subnet The prefix length that identifies one IPv6 client, 32 to 64, or `false`.
 *   Default 56.
 * @throws TypeError or RangeError when `ipv6Subnet` is neither.
 *
 * @example
 * ```ts
 * ipKey('203.0.113.7');                       // '203.0.113.7'
 * ipKey('::ffff:203.0.113.7');                // '203.0.113.7'
 * ipKey('2001:db8:aa:bb01:1:2:3:4');          // '2001:db8:aa:bb00::/56'
 * ipKey('2001:db8:aa:bb01:1:2:3:4', 64);      // '2001:db8:aa:bb01::/64'
 * ```
 */
export function ipKey(address: string, ipv6Subnet: Ipv6Subnet = DEFAULT_IPV6_SUBNET): string {
  return reduceIp(address, ipv6SubnetOption(ipv6Subnet, 'ipv6Subnet'));
}

/** {@link ipKey} for an `ipv6Subnet` already checked (the middleware checks it once, not per request). */
export function reduceIp(address: string, subnet: Ipv6Subnet): string {
  if (!isIPv6(address)) return address;
  const bytes = ipv6Bytes(address);
  const mapped = bytes.subarray(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  // The deprecated IPv4-compatible notation (`::203.0.113.7`) is read as IPv4 too, as express-rate-limit does; only
  // the dotted tail tells it from `::` or `::1`, which share its range.
  const compatible = bytes.subarray(0, 12).every((byte) => byte === 0) && isIPv4(address.split('%', 1)[0]?.split(':').pop() ?? '');
  if (mapped || compatible) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const bits = subnet === false ? 128 : subnet;
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    bytes[i] = (bytes[i] ?? 0) & ((0xff << (8 - keep)) & 0xff);
  }
  return subnet === false ? canonicalIpv6(bytes) : `${canonicalIpv6(bytes)}/${bits}`;
}

/** RFC 5952 text of 16 bytes: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function canonicalIpv6(bytes: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
