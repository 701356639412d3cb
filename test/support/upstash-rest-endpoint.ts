// An Upstash-REST-compatible HTTP endpoint for tests: @upstash/redis (and
// anything else that speaks the same protocol) talks to it as it would to an
// Upstash database, and every command goes on to a real redis-server that the
// harness started (test/support/redis-server.ts), over one RESP connection of
// its own. It listens on 127.0.0.1 only, on a port the kernel picks, and
// close() ends its connections and the one to Redis.
//
// What it speaks, as @upstash/redis 1.x sends it (pkg/http.ts, pkg/pipeline.ts):
//   POST /            a JSON array, one command: `["evalsha", sha, 1, key, arg]`
//                     → 200 `{"result": …}`, or 400 `{"error": "<Redis's error>"}`
//   POST /pipeline    a JSON array of commands → 200 `[{"result": …} | {"error": …}, …]`
//   POST /multi-exec  the same, run between MULTI and EXEC → 200 with one entry per
//                     command; 400 `{"error": "EXECABORT …"}` when Redis discards it
//   Authorization: Bearer <token>; a wrong or missing token → 401 `{"error": "Unauthorized"}`
//   Upstash-Encoding: base64 (what @upstash/redis sends unless `responseEncoding: false`):
//                     every string in a result base64-encoded, except the status "OK";
//                     without it, strings as UTF-8 text. Integers are JSON numbers, nil is null.
//
// What it does not emulate:
//   - read-your-writes sync tokens (`upstash-sync-token` is ignored and never sent back);
//   - Upstash's rate limits, request and database size limits, plans and pricing (a body
//     over `maxBodyBytes`, 32 MiB by default, is refused with 413), and its latency (a fixed
//     `delayMs` before each answer stands in for a round trip, for measurements);
//   - read-only tokens and ACL scopes (one token, allowed everything), and the `_token`
//     query parameter;
//   - the GET/path form of commands (`/set/foo/bar`), a value in the body of a path command,
//     streaming (`text/event-stream`, SUBSCRIBE) and any command that keeps state on the
//     connection or blocks it (MULTI, WATCH, SELECT, SUBSCRIBE, BLPOP…: refused, since
//     every request shares one connection to Redis);
//   - Upstash's own command set: whatever the real redis-server accepts is accepted (CONFIG
//     included, unless named in `refuse`), and Redis's error texts are passed on unchanged;
//   - global replication, eviction and persistence settings: those are the redis-server's;
//   - an error nested inside an array reply (a Lua table holding `redis.error_reply`) is given
//     as its message text; integers past 2^53 lose precision as JSON numbers do.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { LOOPBACK_HOST } from './free-port.js';

/** A Redis error reply. */
class RespError {
  constructor(readonly message: string) {}
}

/** A RESP2 reply: bytes (bulk or status string), an integer, nil, an error, or an array of replies. */
type RespReply = Buffer | number | null | RespError | RespReply[];

/** One command as sent to Redis: its name and arguments, as bytes. */
type RespCommand = Buffer[];

/** The first reply in `buffer` from `at`, and where it ends; undefined while it has not fully arrived. */
function parseReply(buffer: Buffer, at: number): { reply: RespReply; next: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[at] as number);
  const line = buffer.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { reply: buffer.subarray(at + 1, lineEnd), next };
    case '-':
      return { reply: new RespError(line), next };
    case ':':
      return { reply: Number(line), next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { reply: null, next };
      if (buffer.length < next + length + 2) return undefined;
      return { reply: buffer.subarray(next, next + length), next: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { reply: null, next };
      const items: RespReply[] = [];
      let position = next;
      for (let i = 0; i < count; i += 1) {
        const item = parseReply(buffer, position);
        if (item === undefined) return undefined;
        items.push(item.reply);
        position = item.next;
      }
      return { reply: items, next: position };
    }
    default:
      throw new Error(`Unexpected RESP reply type ${JSON.stringify(type)} from Redis`);
  }
}

/** The RESP encoding of commands: arrays of bulk strings. */
function encodeCommands(commands: readonly RespCommand[]): Buffer {
  const parts: Buffer[] = [];
  for (const command of commands) {
    parts.push(Buffer.from(`*${command.length}\r\n`));
    for (const arg of command) parts.push(Buffer.from(`$${arg.length}\r\n`), arg, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Where a `redis://[[user]:password@]host:port[/db]` URL points, and the commands that set up a connection to it. */
function redisTarget(url: string): { host: string; port: number; setup: RespCommand[] } {
  const parsed = new URL(url);
  const setup: RespCommand[] = [];
  if (parsed.password !== '') {
    const credentials = parsed.username === '' ? [parsed.password] : [parsed.username, parsed.password];
    setup.push(['AUTH', ...credentials.map(decodeURIComponent)].map((part) => Buffer.from(part)));
  }
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && db !== '0') setup.push([Buffer.from('SELECT'), Buffer.from(db)]);
  return { host: parsed.hostname, port: Number(parsed.port || 6379), setup };
}

/**
 * One RESP connection to Redis, shared by every request: the commands of one
 * request are written at once and their replies read in order, so that a
 * MULTI … EXEC of one request is never interleaved with another's commands.
 * A connection that fails fails what waits on it; the next request opens a new one.
 */
class RespConnection {
  readonly #target: ReturnType<typeof redisTarget>;
  #socket: Socket | undefined;
  #received: Buffer = Buffer.alloc(0);
  #waiting: { count: number; replies: RespReply[]; resolve: (replies: RespReply[]) => void; reject: (error: Error) => void }[] = [];

  constructor(url: string) {
    this.#target = redisTarget(url);
  }

  /** Sends the commands in one write and resolves with their replies, in order. */
  send(commands: readonly RespCommand[]): Promise<RespReply[]> {
    const socket = this.#socket ?? this.#open();
    return new Promise((resolve, reject) => {
      this.#waiting.push({ count: commands.length, replies: [], resolve, reject });
      socket.write(encodeCommands(commands));
    });
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  #open(): Socket {
    const socket = connect({ host: this.#target.host, port: this.#target.port });
    socket.setNoDelay(true);
    this.#socket = socket;
    this.#received = Buffer.alloc(0);
    if (this.#target.setup.length > 0) {
      // Set up before anything else is written: a failed AUTH or SELECT fails the first request.
      this.#waiting.push({
        count: this.#target.setup.length,
        replies: [],
        resolve: (replies) => {
          const failure = replies.find((reply) => reply instanceof RespError);
          if (failure !== undefined) socket.destroy(new Error(`Setting up the connection to Redis failed: ${failure.message}`));
        },
        reject: () => undefined,
      });
      socket.write(encodeCommands(this.#target.setup));
    }
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    const fail = (error: Error): void => {
      if (this.#socket === socket) this.#socket = undefined;
      const waiting = this.#waiting;
      this.#waiting = [];
      for (const request of waiting) request.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('The connection to Redis closed')));
    return socket;
  }

  #read(chunk: Buffer): void {
    this.#received = this.#received.length === 0 ? chunk : Buffer.concat([this.#received, chunk]);
    let at = 0;
    for (;;) {
      const request = this.#waiting[0];
      if (request === undefined) break;
      const parsed = parseReply(this.#received, at);
      if (parsed === undefined) break;
      at = parsed.next;
      request.replies.push(parsed.reply);
      if (request.replies.length === request.count) {
        this.#waiting.shift();
        request.resolve(request.replies);
      }
    }
    this.#received = this.#received.subarray(at);
  }
}

/** Commands that keep state on a connection or block it: refused, since every request shares one connection. */
const CONNECTION_COMMANDS = new Set([
  'multi',
  'exec',
  'discard',
  'watch',
  'unwatch',
  'select',
  'auth',
  'hello',
  'quit',
  'reset',
  'client',
  'monitor',
  'subscribe',
  'psubscribe',
  'ssubscribe',
  'unsubscribe',
  'punsubscribe',
  'sunsubscribe',
  'blpop',
  'brpop',
  'brpoplpush',
  'blmove',
  'blmpop',
  'bzpopmin',
  'bzpopmax',
  'bzmpop',
  'xread',
  'xreadgroup',
  'wait',
  'waitaof',
]);

/** A request's command as Redis takes it, or the error it is answered with instead. */
function commandOf(value: unknown, refused: ReadonlySet<string>): RespCommand | RespError {
  if (!Array.isArray(value) || value.length === 0) return new RespError('ERR a command is a non-empty JSON array');
  const args: Buffer[] = [];
  for (const arg of value as unknown[]) {
    if (typeof arg === 'string') args.push(Buffer.from(arg, 'utf8'));
    else if (typeof arg === 'number' || typeof arg === 'boolean') args.push(Buffer.from(String(arg)));
    else return new RespError(`ERR unsupported argument ${JSON.stringify(arg)}: each argument is a string or a number`);
  }
  const name = (args[0] as Buffer).toString('utf8').toLowerCase();
  if (refused.has(name)) return new RespError(`ERR Command is not available: '${name.toUpperCase()}'`);
  if (CONNECTION_COMMANDS.has(name)) return new RespError(`ERR Command is not available on this test endpoint: '${name.toUpperCase()}'`);
  return args;
}

/** A reply as JSON: strings base64-encoded (but the status "OK") when `base64`, else as UTF-8 text. */
function encodeResult(reply: RespReply, base64: boolean): unknown {
  if (reply === null || typeof reply === 'number') return reply;
  if (reply instanceof RespError) return reply.message;
  if (Array.isArray(reply)) return reply.map((item) => encodeResult(item, base64));
  const text = reply.toString('utf8');
  return base64 && text !== 'OK' ? reply.toString('base64') : text;
}

/** One entry of a pipeline's or transaction's answer. */
function entryOf(reply: RespReply, base64: boolean): { result: unknown } | { error: string } {
  return reply instanceof RespError ? { error: reply.message } : { result: encodeResult(reply, base64) };
}

/** Options of {@link startUpstashRestEndpoint}. */
export interface UpstashRestEndpointOptions {
  /** The Redis every command goes to, e.g. a harness server's `redis://127.0.0.1:<port>`. */
  readonly redisUrl: string;
  /** The bearer token requests must carry; a random one by default. */
  readonly token?: string;
  /** Commands answered with Upstash's refusal (`ERR Command is not available: 'CONFIG'`) instead of being sent, e.g. `['config']`. */
  readonly refuse?: readonly string[];
  /** The largest request body accepted (larger: 413). 32 MiB by default. */
  readonly maxBodyBytes?: number;
  /** Holds every answer this long (ms) before sending it, as a network round trip would: for measurements. 0 by default. */
  readonly delayMs?: number;
}

/** What the endpoint counted since it started (or since {@link UpstashRestEndpoint.resetStats}). */
export interface UpstashRestEndpointStats {
  /** HTTP requests answered, of every kind. */
  requests: number;
  /** Requests per path (`/`, `/pipeline`, `/multi-exec`, other). */
  byPath: Record<string, number>;
  /** Commands sent on to Redis (a transaction's MULTI and EXEC not counted). */
  commands: number;
  /** Requests refused for their token. */
  unauthorized: number;
}

/** A running endpoint. */
export interface UpstashRestEndpoint {
  /** `http://127.0.0.1:<port>`: the `url` to give @upstash/redis. */
  readonly url: string;
  /** The `token` to give @upstash/redis. */
  readonly token: string;
  readonly stats: UpstashRestEndpointStats;
  resetStats(): void;
  /** Stops listening, ends every open HTTP connection and the connection to Redis. Safe to call twice. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Reads a request's body, up to `limit` bytes kept; undefined when it is larger (read to its end all the same, so that the answer can be sent). */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size > limit ? undefined : Buffer.concat(chunks);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

/** Starts an endpoint on 127.0.0.1, on a free port, forwarding to `options.redisUrl`. */
export async function startUpstashRestEndpoint(options: UpstashRestEndpointOptions): Promise<UpstashRestEndpoint> {
  const token = options.token ?? randomBytes(16).toString('hex');
  const refused = new Set((options.refuse ?? []).map((name) => name.toLowerCase()));
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const redis = new RespConnection(options.redisUrl);
  const stats: UpstashRestEndpointStats = { requests: 0, byPath: {}, commands: 0, unauthorized: 0 };
  const delayMs = options.delayMs ?? 0;
  const answer = (response: ServerResponse, status: number, body: unknown): void => {
    if (delayMs <= 0) return send(response, status, body);
    setTimeout(() => send(response, status, body), delayMs);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '/').split('?')[0] as string;
    stats.requests += 1;
    stats.byPath[path] = (stats.byPath[path] ?? 0) + 1;
    if (request.method !== 'POST') return answer(response, 405, { error: 'Method Not Allowed: this test endpoint takes POST only' });
    if (request.headers.authorization !== `Bearer ${token}`) {
      stats.unauthorized += 1;
      request.resume();
      return answer(response, 401, { error: 'Unauthorized' });
    }
    const body = await readBody(request, maxBodyBytes);
    if (body === undefined) return answer(response, 413, { error: `Request body larger than ${maxBodyBytes} bytes` });
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return answer(response, 400, { error: 'ERR the request body is not JSON' });
    }
    const base64 = String(request.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';

    if (path === '/' || path === '') {
      const command = commandOf(parsed, refused);
      if (command instanceof RespError) return answer(response, 400, { error: command.message });
      stats.commands += 1;
      const [reply] = (await redis.send([command])) as [RespReply];
      return reply instanceof RespError ? answer(response, 400, { error: reply.message }) : answer(response, 200, { result: encodeResult(reply, base64) });
    }
    if (path !== '/pipeline' && path !== '/multi-exec') return answer(response, 404, { error: `Not found: ${path}` });
    if (!Array.isArray(parsed) || parsed.length === 0) return answer(response, 400, { error: 'ERR the body is a non-empty JSON array of commands' });
    const commands = (parsed as unknown[]).map((item) => commandOf(item, refused));

    if (path === '/pipeline') {
      const toSend = commands.filter((command): command is RespCommand => !(command instanceof RespError));
      stats.commands += toSend.length;
      const replies = toSend.length === 0 ? [] : await redis.send(toSend);
      let at = 0;
      return answer(
        response,
        200,
        commands.map((command) => (command instanceof RespError ? { error: command.message } : entryOf(replies[at++] as RespReply, base64))),
      );
    }

    // A command refused here is refused as Redis refuses a command when it is queued: the transaction is discarded.
    const refusal = commands.find((command): command is RespError => command instanceof RespError);
    if (refusal !== undefined) return answer(response, 400, { error: `EXECABORT Transaction discarded because of previous errors: ${refusal.message}` });
    const queued = commands as RespCommand[];
    stats.commands += queued.length;
    const replies = await redis.send([[Buffer.from('MULTI')], ...queued, [Buffer.from('EXEC')]]);
    const exec = replies[replies.length - 1] as RespReply;
    if (exec instanceof RespError) {
      const queueError = replies.slice(1, -1).find((reply): reply is RespError => reply instanceof RespError);
      return answer(response, 400, { error: queueError === undefined ? exec.message : `${exec.message}: ${queueError.message}` });
    }
    if (!Array.isArray(exec)) return answer(response, 400, { error: 'EXECABORT the transaction was aborted' });
    return answer(
      response,
      200,
      exec.map((reply) => entryOf(reply, base64)),
    );
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { error: `Test endpoint failed: ${error instanceof Error ? error.message : String(error)}` });
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${LOOPBACK_HOST}:${port}`,
    token,
    stats,
    resetStats() {
      stats.requests = 0;
      stats.byPath = {};
      stats.commands = 0;
      stats.unauthorized = 0;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        redis.close();
      });
      return closing;
    },
  };
}
