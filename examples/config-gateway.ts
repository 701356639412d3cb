// An API gateway whose rate limits live in a configuration file, as an ops
// person configures nginx, Envoy or Kong: per route, the limits every client
// gets (one rule, or tiers that are all enforced), and for some clients limits
// of their own. The file (examples/config-gateway.rules.json, or RULES_FILE)
// is read and checked once, at start-up: a mistake stops the gateway with an
// error that names its place in the file, e.g.
//
//   Expected `routes[1].limits.interval` to be a whole number of milliseconds
//   from 1 to 1000000000000, or a duration such as '500ms', '10s', '1m', '1h'
//   or '1d', got `"soon"` (string)
//
// Each route and client gets one limiter, or a RateLimiterStack of its tiers,
// behind one Express middleware whose RateLimit-Policy header names every
// tier. A client is its `x-client-id` (set by the authentication in front of
// the gateway), else its IP. The upstream is a stub that answers with JSON.
// In memory by default; with REDIS_URL set, every gateway process on that
// Redis shares the limits.
//
//   npx tsx examples/config-gateway.ts               serve on PORT (default 3000)
//   curl -i localhost:3000/api/search
//   npx tsx examples/config-gateway.ts --self-test   start on a free port, send a few requests to itself, check, exit

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';
import { Redis } from 'ioredis';
import { InvalidOptionTypeError, RateLimiterStack, RollingRateLimiter, parseRules, type LimiterRule } from '../src/index.js';
import { ipKey, rateLimit } from '../src/http/express/express-middleware.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** One route of the file, checked: its tiers for every client, and the tiers of the clients that have their own. */
interface Route {
  readonly name: string;
  readonly method: Method;
  readonly path: string;
  readonly limits: readonly LimiterRule[];
  readonly clients: ReadonlyMap<string, readonly LimiterRule[]>;
}

/** A refusal of the file's own keys, in the library's words: the path (the file itself at ''), what it should be, what it is. */
function refuse(path: string, expected: string, value: unknown): never {
  const where = path === '' ? 'the rules file' : `\`${path}\``;
  throw new InvalidOptionTypeError(`Expected ${where} to be ${expected}, got ${JSON.stringify(value) ?? String(value)}`, path, value);
}

/** `value` as an object; with `keys`, one whose keys are all among them (`$comment` is allowed everywhere). */
function objectAt(value: unknown, path: string, keys?: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(path, 'an object', value);
  for (const key of Object.keys(value)) {
    if (keys !== undefined && key !== '$comment' && !keys.includes(key)) {
      const at = path === '' ? key : `${path}.${key}`;
      throw new InvalidOptionTypeError(`Unknown key \`${at}\`; the keys here are ${keys.join(', ')}`, at, (value as Record<string, unknown>)[key]);
    }
  }
  return value as Record<string, unknown>;
}

/** The tiers at `path`, each with a name (its `namespace`): the name is what RateLimit-Policy calls it. */
function tiersAt(value: unknown, path: string): LimiterRule[] {
  const tiers = parseRules(value, path);
  tiers.forEach((tier, i) => {
    if (tier.namespace === undefined)
      refuse(`${path}${Array.isArray(value) ? `[${i}]` : ''}.namespace`, "the tier's name (it is sent in RateLimit-Policy)", undefined);
  });
  return tiers;
}

/** Checks the parsed file: every route, its limits and its clients' limits. Every error names its path in the file. */
export function checkRules(data: unknown): Route[] {
  const root = objectAt(data, '', ['routes']);
  if (!Array.isArray(root.routes) || root.routes.length === 0) refuse('routes', 'a non-empty list of routes', root.routes);
  const names = new Set<string>();
  return (root.routes as unknown[]).map((value, i): Route => {
    const at = `routes[${i}]`;
    const route = objectAt(value, at, ['name', 'method', 'path', 'limits', 'clients']);
    const { name, method, path } = route;
    if (typeof name !== 'string' || !/^[a-z0-9-]+$/.test(name)) refuse(`${at}.name`, 'a name of lowercase letters, digits and dashes', name);
    if (names.has(name)) refuse(`${at}.name`, 'the name of no other route', name);
    names.add(name);
    if (!(METHODS as readonly unknown[]).includes(method)) refuse(`${at}.method`, `one of ${METHODS.join(', ')}`, method);
    if (typeof path !== 'string' || !path.startsWith('/')) refuse(`${at}.path`, "a path starting with '/'", path);
    const clients = new Map<string, LimiterRule[]>();
    const byClient = route.clients === undefined ? {} : objectAt(route.clients, `${at}.clients`);
    for (const [client, limits] of Object.entries(byClient)) {
      if (client !== '$comment') clients.set(client, tiersAt(limits, `${at}.clients[${JSON.stringify(client)}]`));
    }
    return { name, method: method as Method, path, limits: tiersAt(route.limits, `${at}.limits`), clients };
  });
}

/** Reads and checks the rules file (a file that is not JSON is refused with its parser's message). */
function readRules(file: string): Route[] {
  return checkRules(JSON.parse(readFileSync(file, 'utf8')));
}

const rulesFile = process.env.RULES_FILE ?? fileURLToPath(new URL('config-gateway.rules.json', import.meta.url));
const routes = ((): Route[] => {
  try {
    return readRules(rulesFile);
  } catch (error) {
    // A gateway with a mistake in its rules does not start: the message names the file and the place in it.
    console.error(`The rules in ${rulesFile} are refused: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
})();

const redisUrl = process.env.REDIS_URL;
const client = redisUrl === undefined || redisUrl === '' ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
client?.on('error', () => undefined); // failures reach the limiter's calls (and so Express's error handler)
const store = client === undefined ? {} : { client, timeout: 500 };

/** The id of a request: its client, as the authentication in front named it, else its IP (an IPv6 client by its /56). */
function clientKey(req: express.Request): string | undefined {
  const clientId = req.get('x-client-id');
  if (clientId !== undefined && clientId !== '') return `client:${clientId}`;
  return req.ip === undefined ? undefined : `ip:${ipKey(req.ip)}`;
}

/** One limiter, or a stack of the tiers, for a route and the clients it serves; each tier on a namespace of its own. */
function limiterOf(route: Route, tiers: readonly LimiterRule[], owner: string): RollingRateLimiter | RateLimiterStack {
  const limiters = tiers.map((tier) => new RollingRateLimiter({ ...store, ...tier, namespace: `gateway:${route.name}:${owner}:${tier.namespace}` }));
  return limiters.length === 1 ? (limiters[0] as RollingRateLimiter) : new RateLimiterStack(limiters);
}

/** Every limiter the gateway made, to clear the self-test's ids afterwards. */
const limiters: (RollingRateLimiter | RateLimiterStack)[] = [];

/** The middleware of a route's tiers for `owner`: every tier enforced, each named by its `namespace` in the headers. */
function middlewareOf(route: Route, tiers: readonly LimiterRule[], owner: string): RequestHandler {
  const limiter = limiterOf(route, tiers, owner);
  limiters.push(limiter);
  return rateLimit({ limiter, key: clientKey, policyName: ({ index }) => tiers[index]?.namespace ?? `tier-${index}` });
}

const app = express();
// Behind a load balancer, also: app.set('trust proxy', 1), or every client without an x-client-id shares its IP.
for (const route of routes) {
  const everyone = middlewareOf(route, route.limits, 'everyone');
  const own = new Map([...route.clients].map(([id, tiers]) => [id, middlewareOf(route, tiers, `client:${id}`)]));
  const limit: RequestHandler = (req, res, next) => (own.get(req.get('x-client-id') ?? '') ?? everyone)(req, res, next);
  const upstream: RequestHandler = (req, res) => {
    res.json({ route: route.name, client: clientKey(req) });
  };
  app.route(route.path)[route.method.toLowerCase() as Lowercase<Method>](limit, upstream);
}

/** One request's status and the headers the limits set. */
async function send(baseUrl: string, method: Method, path: string, clientId?: string): Promise<{ status: number; headers: Record<string, string | null> }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: clientId === undefined ? {} : { 'x-client-id': clientId },
    signal: AbortSignal.timeout(5_000),
  });
  await response.arrayBuffer();
  const headers = Object.fromEntries(['RateLimit-Policy', 'RateLimit', 'Retry-After'].map((name) => [name, response.headers.get(name)]));
  console.log(`${method} ${path}${clientId === undefined ? '' : ` as ${clientId}`}: ${response.status}  ${JSON.stringify(headers)}`);
  return { status: response.status, headers };
}

async function selfTest(baseUrl: string): Promise<string[]> {
  const failures: string[] = [];
  const expect = (ok: boolean, what: string): void => void (ok || failures.push(what));
  const run = randomBytes(4).toString('hex');

  // A client without limits of its own: 3 per second and 30 per minute; the 4th request in a second is refused by the per-second tier.
  const plain = [];
  for (let i = 0; i < 4; i++) plain.push(await send(baseUrl, 'GET', '/api/search', `client-${run}`));
  expect(plain.map(({ status }) => status).join() === '200,200,200,429', 'search: 3 admitted, the 4th refused');
  expect(
    plain.every(({ headers }) => headers['RateLimit-Policy'] === '"per-second";q=3;w=1, "per-minute";q=30;w=60'),
    'search: both tiers in RateLimit-Policy',
  );
  expect(plain[3]?.headers['Retry-After'] === '1' && plain[3].headers.RateLimit === '"per-second";r=0;t=1', 'search: the refusal names the per-second tier');
  // Without an x-client-id the client is its IP, with a limit of its own.
  expect((await send(baseUrl, 'GET', '/api/search')).status === 200, 'search: a request without x-client-id is limited by its IP, apart');

  // partner-acme has limits of its own: 10 per second.
  const partner = [];
  for (let i = 0; i < 5; i++) partner.push(await send(baseUrl, 'GET', '/api/search', 'partner-acme'));
  expect(
    partner.every(({ status }) => status === 200),
    "search: partner-acme's own 10 per second admit 5",
  );
  expect(partner[0]?.headers['RateLimit-Policy'] === '"per-second";q=10;w=1, "per-minute";q=300;w=60', "search: partner-acme's tiers in RateLimit-Policy");

  // Orders: one rule, at least 2 s apart.
  const orders = [await send(baseUrl, 'POST', '/api/orders', `buyer-${run}`), await send(baseUrl, 'POST', '/api/orders', `buyer-${run}`)];
  expect(orders.map(({ status }) => status).join() === '200,429', 'orders: a double click is refused');
  expect(
    orders[1]?.headers['Retry-After'] === '2' && orders[1].headers['RateLimit-Policy'] === '"per-hour";q=5;w=3600',
    'orders: Retry-After 2 and the hourly policy',
  );

  // A mistake in the file is refused at start-up, naming its place.
  const broken = JSON.parse(readFileSync(rulesFile, 'utf8')) as { routes: { limits: { interval: unknown } }[] };
  (broken.routes[1] as { limits: { interval: unknown } }).limits.interval = 'soon';
  const refusal = ((): string => {
    try {
      checkRules(broken);
      return 'accepted';
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  })();
  console.log(`a rules file with routes[1].limits.interval = "soon": ${refusal}`);
  expect(
    refusal.startsWith('Expected `routes[1].limits.interval` to be') && refusal.includes('"soon"'),
    'a bad interval is refused naming routes[1].limits.interval',
  );

  for (const limiter of limiters)
    for (const id of [`client:client-${run}`, 'ip:127.0.0.1', 'client:partner-acme', `client:buyer-${run}`]) await limiter.clear(id);
  return failures;
}

async function main(): Promise<void> {
  const testing = process.argv.includes('--self-test');
  const server = testing ? app.listen(0, '127.0.0.1') : app.listen(Number(process.env.PORT ?? 3000));
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  const where = client === undefined ? 'in memory (set REDIS_URL to use Redis)' : 'on Redis';
  console.log(`Listening on http://127.0.0.1:${port}, ${routes.length} routes limited ${where}, from ${rulesFile}`);
  if (!testing) return;

  try {
    const failures = await selfTest(`http://127.0.0.1:${port}`);
    console.log(failures.length === 0 ? 'self-test passed' : `self-test FAILED: ${failures.join('; ')}`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await client?.quit().catch(() => client.disconnect());
  }
}

main().catch((error: unknown) => {
  console.error(`The example failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
  void client?.quit().catch(() => client.disconnect());
});
