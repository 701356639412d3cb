// Proxy sanity checks for the IP-keyed default, as express-rate-limit makes
// them: a request that carries `X-Forwarded-For` while Express trusts no proxy
// (every client then shares the proxy's limit), `trust proxy: true` (every
// hop is trusted, so a client chooses its own IP with a forged header), and a
// `req.ip` that is not an IP address (the request is refused). Each
// is reported once per middleware, with `process.emitWarning` and a stable
// code, never thrown: a misconfiguration should be seen, not take the site
// down.

/** Codes of the warnings the HTTP integrations emit (`warning.code`, and `process.on('warning')`). */
export const PROXY_WARNING_CODES = {
  /** A request carried `X-Forwarded-For`, and Express trusts no proxy: `req.ip` is the proxy's address. */
  forwardedForUntrusted: 'RATE_LIMITER_XFF_UNTRUSTED',
  /** Express's `trust proxy` is `true`: every hop is trusted, so clients can choose their IP. */
  trustProxyTrue: 'RATE_LIMITER_TRUST_PROXY_TRUE',
  /**
   * `req.ip` was not an IP address, even without a port (a proxy that writes
   * something else in `X-Forwarded-For`): the request was refused with a
   * `TypeError` (a 500), since keying on such a value could give each
   * connection its own limit.
   */
  invalidIp: 'RATE_LIMITER_INVALID_IP',
} as const;

/** Emits a warning with its code, at most once per code for the life of the function. */
export type WarnOnce = (code: string, message: string) => void;

/** Makes a {@link WarnOnce}: `process.emitWarning`, type `RateLimiterWarning`, once per code. */
export function createWarnOnce(): WarnOnce {
  const warned = new Set<string>();
  return (code, message) => {
    if (warned.has(code)) return;
    warned.add(code);
    process.emitWarning(message, { type: 'RateLimiterWarning', code });
  };
}

/** What the checks read of a request: Express's settings through `req.app`, and the headers. */
interface CheckedRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly app?: { get?(setting: string): unknown } | undefined;
}

/**
 * Makes the checks of one middleware: call the result with each request; each
 * problem is warned about at most once in the middleware's life (once per
 * `warn`, which the middleware shares with its other checks).
 */
export function createProxyChecks(warn: WarnOnce = createWarnOnce()): (req: CheckedRequest) => void {
  return (req) => {
    if (typeof req.app?.get !== 'function') return;
    const trustProxy = req.app.get('trust proxy');
    if (trustProxy === true) {
      warn(
        PROXY_WARNING_CODES.trustProxyTrue,
        "Express's `trust proxy` is `true`: every hop is trusted, so a client chooses its own IP (and its own rate limit) " +
          "with a forged X-Forwarded-For. Set it to the number of proxies in front of the app, e.g. app.set('trust proxy', 1).",
      );
    } else if ((trustProxy === false || trustProxy === undefined) && req.headers['x-forwarded-for'] !== undefined) {
      warn(
        PROXY_WARNING_CODES.forwardedForUntrusted,
        "A request carried X-Forwarded-For, but Express trusts no proxy (`trust proxy` is false): req.ip is the proxy's " +
          'address, so every client behind it shares one rate limit. Tell Express how many proxies are in front of it, ' +
          "e.g. app.set('trust proxy', 1).",
      );
    }
  };
}
