// Real HTTP for the middleware tests: serve a request listener (an Express app
// or a plain handler) on 127.0.0.1 port 0, and read the headers that matter.

import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening server and how to reach and stop it. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Closes every connection and the server; safe to call twice. */
  close(): Promise<void>;
}

/** Serves `listener` on a free loopback port. */
export async function serve(listener: RequestListener): Promise<RunningServer> {
  const server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** The rate-limit headers of a response (absent ones left out), by their canonical names. */
export function rateLimitHeaders(response: Response): Record<string, string> {
  const names = ['RateLimit-Policy', 'RateLimit', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
  const found: Record<string, string> = {};
  for (const name of names) {
    const value = response.headers.get(name);
    if (value !== null) found[name] = value;
  }
  return found;
}

/** What a test looks at in a response: the status, the rate-limit headers and the body text. */
export interface Seen {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly contentType: string | null;
  readonly body: string;
}

/** GETs `url` with `headers`, bounded by a 10 s timeout, and reads the whole response. */
export async function get(url: string, headers: Record<string, string> = {}): Promise<Seen> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return {
    status: response.status,
    headers: rateLimitHeaders(response),
    contentType: response.headers.get('content-type'),
    body: await response.text(),
  };
}
