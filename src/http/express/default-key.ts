// The middleware's default key: the client IP as Express reports it
// (`req.ip`), without a port a proxy may have written, reduced by `ipKey`
// (IPv6 to its prefix, IPv4-mapped IPv6 to IPv4), after the proxy checks.

import type { Request } from 'express';
import { describeValue } from '../../core/check.js';
import { ipWithoutPort, reduceIp, type Ipv6Subnet } from '../ip-key.js';
import { createProxyChecks, createWarnOnce, PROXY_WARNING_CODES } from './proxy-checks.js';

/** The request's path without its query string, which may hold secrets not meant for error logs. */
export function pathOf(req: Request): string {
  const url: string = req.originalUrl ?? req.url ?? '';
  return url.split('?', 1)[0] ?? '';
}

/**
 * Makes the default key of one middleware: `undefined` when the client is
 * unknown (gone); a `TypeError` (and, when `validate`, a warning once) for a
 * `req.ip` that is not an IP address even without a port. Each problem is
 * warned about once per middleware.
 */
export function createDefaultKey(ipv6Subnet: Ipv6Subnet, validate: boolean): (req: Request) => string | undefined {
  const warn = createWarnOnce();
  const checkProxy = validate ? createProxyChecks(warn) : undefined;
  return (req) => {
    checkProxy?.(req);
    const address = req.ip ?? req.socket?.remoteAddress;
    if (address === undefined || address === '') return undefined;
    const ip = ipWithoutPort(address);
    if (ip !== undefined) return reduceIp(ip, ipv6Subnet);
    const problem =
      `req.ip is ${describeValue(address)}, which is not an IP address (with or without a port): keyed as it is, ` +
      'it could give each connection a limit of its own. Check what the proxy writes in X-Forwarded-For and ' +
      "Express's `trust proxy`, or give a `key` function";
    if (validate) warn(PROXY_WARNING_CODES.invalidIp, `${problem}. Such requests are refused (a TypeError to next(error)).`);
    throw new TypeError(`rateLimit refused ${req.method} ${pathOf(req)}: ${problem}`);
  };
}
