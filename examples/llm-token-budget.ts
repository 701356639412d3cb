// An LLM budget shared by several workers: requests per minute (RPM), tokens per minute (TPM) and tokens per day, the
// three limits a model provider sets on an API key (or a project), decided together by one RateLimiterStack. Each call
//
//   1. reserves its estimate, the prompt's tokens plus max_tokens (the most the answer may use), under an action id,
//      waiting with waitUntilAllowed while the budget is spent;
//   2. calls the provider;
//   3. settles the reservation to the usage the provider reports: what the answer did not use goes back at once.
//
// The provider is simulated, and keeps its own books (not the library's): it enforces the same limits over exact rolling
// windows of its own records, and answers 429 to a request that would exceed one. The run prints how many 429s it
// answered (0) and the share of the TPM budget the workers used: close to 100%, less what reservations hold above the
// actual usage while answers are being written.
//
// Time is real, only shorter: a minute here lasts one second (MINUTE), so the five minutes run in about five seconds.
// waitUntilAllowed really sleeps (with the global timers), so simulated time that jumps ahead would not do; the limiter
// and the provider read one real clock, once per task (see `simulationClock`), so that a request reaches the provider
// at the instant the limiter admitted it. Nothing else is faked. In production, MINUTE is '1m', DAY is '1d', the limiter
// keeps its default clock, and its windows are the provider's plus an allowance for your latency (see `main`).
//
// In memory by default; set REDIS_URL to keep the budget in Redis, where workers in several processes share it.
//
//   npx tsx examples/llm-token-budget.ts

import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, type MicrosecondClock } from '../src/index.js';

/** A minute, in milliseconds of real time: one second here, so that the run is quick (in production: '1m'). */
const MINUTE = 1_000;
const DAY = 24 * 60 * MINUTE;
/** The provider's limits for our API key (its dashboard states them). */
const LIMITS = { requestsPerMinute: 60, tokensPerMinute: 90_000, tokensPerDay: 2_000_000 } as const;
const API_KEY = 'project-42';
const WORKERS = 6;
const RUN_MINUTES = 5;

// ---------------------------------------------------------------------------------------------------------------
// The budget: one limiter per limit, stacked so that every call is decided by all three at once, atomically.
// ---------------------------------------------------------------------------------------------------------------

/**
 * The three limits as a stack. `countBlocked: false`: a call waiting for the budget uses none of it. Each window is
 * the provider's plus `allowanceMs`, the most a request may take to reach the provider after its admission (see
 * `main`): the provider starts a request's minute when it receives it, a little after the limiter started it. The
 * `clock` is this simulation's; in production, leave it out.
 */
function llmBudget(client: Redis | undefined, namespace: string, clock: MicrosecondClock, allowanceMs: number): RateLimiterStack {
  const shared = { clock, countBlocked: false, ...(client === undefined ? {} : { client }) };
  const requestsPerMinute = new RollingRateLimiter({
    ...shared,
    namespace: `${namespace}:rpm`,
    interval: MINUTE + allowanceMs,
    maxInInterval: LIMITS.requestsPerMinute,
  });
  const tokensPerMinute = new RollingRateLimiter({
    ...shared,
    namespace: `${namespace}:tpm`,
    interval: MINUTE + allowanceMs,
    maxCostInInterval: LIMITS.tokensPerMinute,
  });
  const tokensPerDay = new RollingRateLimiter({
    ...shared,
    namespace: `${namespace}:tpd`,
    interval: DAY + allowanceMs,
    maxCostInInterval: LIMITS.tokensPerDay,
  });
  return new RateLimiterStack([requestsPerMinute, tokensPerMinute, tokensPerDay]);
}

// ---------------------------------------------------------------------------------------------------------------
// One call to the model: reserve, wait, call, settle. This is the part to copy.
// ---------------------------------------------------------------------------------------------------------------

/** What a worker asks the model: the prompt's size in tokens (a tokenizer counts it) and the answer's cap. */
interface ChatRequest {
  readonly promptTokens: number;
  readonly maxTokens: number;
}

/** The provider's answer: the usage it counted, or a 429. */
type ChatReply =
  | { readonly status: 200; readonly usage: { readonly promptTokens: number; readonly completionTokens: number } }
  | { readonly status: 429; readonly retryAfterMs: number };

/** Anything that answers chat requests: the real client in production, {@link SimulatedProvider} here. */
interface ChatProvider {
  chat(request: ChatRequest): Promise<ChatReply>;
}

/**
 * Calls the model within the budget, and resolves with its reply; rejects with a RateLimitedError when the budget
 * would have room only after `maxWait` (today's tokens are spent), or with `signal`'s reason when it aborts meanwhile.
 */
async function chatWithinBudget(budget: RateLimiterStack, provider: ChatProvider, request: ChatRequest, signal: AbortSignal): Promise<ChatReply> {
  // 1. Reserve the most this call may use, under an id of its own, waiting until the budget has room for it.
  const actionId = randomUUID();
  const estimate = request.promptTokens + request.maxTokens;
  await budget.waitUntilAllowed(API_KEY, { actionId, cost: estimate, maxWait: 2 * MINUTE, signal });
  // 2. Call. (A call that fails without an answer keeps its reservation: the provider may have counted it.)
  const reply = await provider.chat(request);
  // A 429 says the provider is fuller than the budget thinks: a request reached it later than the windows allow for,
  // or another client uses the same key. Keep the reservation (it holds its tokens back for a minute) and back off.
  if (reply.status === 429) return reply;
  // 3. Settle to what the call really used, in the minute's and the day's budget alike: the rest goes back at once.
  await budget.settle(API_KEY, actionId, reply.usage.promptTokens + reply.usage.completionTokens);
  return reply;
}

/** A worker: calls the model with one request after another until `signal` aborts. */
async function worker(budget: RateLimiterStack, provider: ChatProvider, signal: AbortSignal): Promise<void> {
  try {
    while (!signal.aborted) {
      const reply = await chatWithinBudget(budget, provider, randomRequest(), signal);
      if (reply.status === 429) await sleep(reply.retryAfterMs, undefined, { signal });
    }
  } catch (error) {
    if (!signal.aborted) throw error; // else: stopped while waiting
  }
}

/** A request of the kind an application sends: a prompt of 300 to 4,000 tokens, and an answer capped at 256 to 2,048. */
function randomRequest(): ChatRequest {
  const promptTokens = 300 + Math.floor(Math.random() * 3_701);
  const maxTokens = [256, 512, 1_024, 2_048][Math.floor(Math.random() * 4)] ?? 512;
  return { promptTokens, maxTokens };
}

// ---------------------------------------------------------------------------------------------------------------
// The run: the workers share the budget for RUN_MINUTES, then the picture.
// ---------------------------------------------------------------------------------------------------------------

/** What a run measured, from the provider's books and the limiter's. */
export interface RunSummary {
  readonly store: string;
  /** Requests the provider received, and how many of them it answered 429. */
  readonly requests: number;
  readonly rejected: number;
  /** Tokens the answered requests used, by the provider's count, and the share of the TPM budget of the run they are. */
  readonly tokensUsed: number;
  readonly tpmShare: number;
  /** The most tokens, and requests, the provider counted in any rolling minute. */
  readonly busiestMinuteTokens: number;
  readonly busiestMinuteRequests: number;
  /** Tokens the answered requests reserved (prompt + max_tokens), before they settled to the tokens used. */
  readonly tokensReserved: number;
  /** Tokens the limiter's day budget holds at the end: the provider's count, when every settlement landed. */
  readonly limiterDayTokens: number;
  /** How much longer than the provider's the limiter's windows are (see `main`). */
  readonly allowanceMs: number;
  readonly realMs: number;
  /** The printed report. */
  readonly lines: readonly string[];
}

/**
 * Runs the workers for RUN_MINUTES against the simulated provider, in memory or (given `redisUrl`) on Redis, and
 * returns what it measured (and prints it unless `print` is false).
 */
export async function main({ redisUrl, print = true }: { redisUrl?: string | undefined; print?: boolean } = {}): Promise<RunSummary> {
  const client = redisUrl === undefined || redisUrl === '' ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  client?.on('error', () => undefined); // a failure reaches the call that fails; this keeps ioredis from logging it again
  const namespace = `example:llm:${randomBytes(4).toString('hex')}`;
  // How much later than its admission a request may reach the provider. In memory, none: the request reaches it at
  // the instant the limiter stamped it (see `simulationClock`). Through Redis, the limiter stamps the attempt before
  // its round trip to Redis: 50 ms covers that round trip on a machine that is not overloaded (50 ms stands for 3 s,
  // a minute here being a second; where a round trip takes longer, the provider may count a request later than the
  // limiter did, and answer 429). In production: your worst latency to the provider plus your clock's skew from the
  // provider's (a second of it costs 1.7% of a 60 s window).
  const allowanceMs = client === undefined ? 0 : 50;
  const clock = simulationClock();
  const budget = llmBudget(client, namespace, clock, allowanceMs);
  const provider = new SimulatedProvider(LIMITS, clock);
  const stop = new AbortController();
  try {
    await budget.wouldLimitWithInfo(API_KEY, { cost: 1 }); // connect first: the first calls are not slowed by connecting
    const startedMs = performance.now();
    const startUs = clock();
    const timer = setTimeout(() => stop.abort(), RUN_MINUTES * MINUTE);
    try {
      await Promise.all(Array.from({ length: WORKERS }, () => worker(budget, provider, stop.signal)));
    } finally {
      clearTimeout(timer);
      stop.abort();
    }
    // The day's tokens as the limiter counts them: its day tier's budget, less what a dry run of a 1-token call leaves.
    const today = await budget.wouldLimitWithInfo(API_KEY, { cost: 1 });
    const limiterDayTokens = LIMITS.tokensPerDay - ((today.tiers[2]?.costRemaining ?? 0) + 1);
    const store = client === undefined ? 'in memory (set REDIS_URL to use Redis)' : `Redis at ${describeRedis(redisUrl ?? '')}, namespace ${namespace}`;
    const summary = summarize(provider.log, startUs, { store, limiterDayTokens, allowanceMs, realMs: performance.now() - startedMs });
    if (print) process.stdout.write(summary.lines.join('\n') + '\n');
    return summary;
  } finally {
    // Leave nothing behind in Redis (if it still answers), then close the connection, so that the process can exit.
    await budget.clear(API_KEY).catch(() => undefined);
    await client?.quit().catch(() => client.disconnect());
  }
}

/**
 * The clock the limiter and the simulated provider share: real time in microseconds, read once per task (a timer's or
 * an I/O event's callback, with every promise continuation it sets off). A request sent as soon as its admission
 * resolves thus reaches the provider at the very instant the limiter stamped it, however busy the machine, as if the
 * network took no time. (In production the limiter reads its own clock, the default; a real provider reads another,
 * later by your latency and your clocks' skew: that is what the windows' allowance is for.)
 */
function simulationClock(): MicrosecondClock {
  let nowUs: number | undefined;
  return () => {
    if (nowUs === undefined) {
      nowUs = Math.floor((performance.timeOrigin + performance.now()) * 1_000);
      process.nextTick(() => (nowUs = undefined)); // runs once the task's promise continuations are all done
    }
    return nowUs;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The simulated provider: the same limits, on its own books.
// ---------------------------------------------------------------------------------------------------------------

/** One request as the provider saw it. */
interface ProviderRecord {
  /** When it received the request, in microseconds. */
  readonly atUs: number;
  readonly status: 200 | 429;
  /** The prompt plus max_tokens while the answer is written, then the tokens really used (0 for a 429). */
  tokens: number;
  readonly reserved: number;
}

/**
 * An LLM API that enforces the limits itself, over exact rolling windows: a request counts from the moment the
 * provider receives it until a minute (and a day) later. While its answer is being written it counts its prompt plus
 * max_tokens, then the tokens it really used, as providers that reserve max_tokens and adjust at the end do. A request
 * that would take the last minute (or day) over a limit is answered 429, and counts for nothing.
 */
class SimulatedProvider implements ChatProvider {
  readonly log: ProviderRecord[] = [];
  readonly #limits: typeof LIMITS;
  readonly #clock: MicrosecondClock;

  constructor(limits: typeof LIMITS, clock: MicrosecondClock) {
    this.#limits = limits;
    this.#clock = clock;
  }

  async chat(request: ChatRequest): Promise<ChatReply> {
    const atUs = this.#clock();
    const reserved = request.promptTokens + request.maxTokens;
    const lastMinute = this.#answeredSince(atUs - MINUTE * 1_000);
    const lastDay = this.#answeredSince(atUs - DAY * 1_000);
    const tooMany =
      lastMinute.length + 1 > this.#limits.requestsPerMinute ||
      tokensOf(lastMinute) + reserved > this.#limits.tokensPerMinute ||
      tokensOf(lastDay) + reserved > this.#limits.tokensPerDay;
    if (tooMany) {
      this.log.push({ atUs, status: 429, tokens: 0, reserved });
      // Retry-After: until the oldest request of the last minute leaves it.
      return { status: 429, retryAfterMs: Math.ceil(((lastMinute[0]?.atUs ?? atUs) + MINUTE * 1_000 - atUs) / 1_000) };
    }
    const record: ProviderRecord = { atUs, status: 200, tokens: reserved, reserved };
    this.log.push(record);
    // The answer takes 0.4 s plus 12 ms a token (of the simulated minute), and uses from 10% to all of max_tokens.
    const completionTokens = Math.ceil(request.maxTokens * (0.1 + 0.9 * Math.random()));
    await new Promise((resolve) => setTimeout(resolve, ((400 + 12 * completionTokens) * MINUTE) / 60_000));
    record.tokens = request.promptTokens + completionTokens;
    return { status: 200, usage: { promptTokens: request.promptTokens, completionTokens } };
  }

  /** The answered requests received after `sinceUs` (the window is `(now - length, now]`). */
  #answeredSince(sinceUs: number): ProviderRecord[] {
    return this.log.filter((record) => record.status === 200 && record.atUs > sinceUs);
  }
}

function tokensOf(records: readonly ProviderRecord[]): number {
  return records.reduce((sum, record) => sum + record.tokens, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// The picture: the provider's books, minute by minute and as a rolling window.
// ---------------------------------------------------------------------------------------------------------------

const color = process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
const paint = (text: string, sgr: string): string => (color ? `\u001b[${sgr}m${text}\u001b[0m` : text);
const number = (value: number): string => value.toLocaleString('en-US');
const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;
const BAR_WIDTH = 50;
/** Columns of the rolling-window chart: one every 5 s of a simulated minute. */
const COLUMNS_PER_MINUTE = 12;
const LEVELS = '▁▂▃▄▅▆▇█';

function summarize(
  log: readonly ProviderRecord[],
  startUs: number,
  run: { store: string; limiterDayTokens: number; allowanceMs: number; realMs: number },
): RunSummary {
  const minuteUs = MINUTE * 1_000;
  const answered = log.filter((record) => record.status === 200);
  const rejected = log.length - answered.length;
  const tokensUsed = tokensOf(answered);
  const tokensReserved = answered.reduce((sum, record) => sum + record.reserved, 0);
  const tpmShare = tokensUsed / (RUN_MINUTES * LIMITS.tokensPerMinute);
  /** The provider's rolling minute ending at `atUs`: the requests and the tokens it holds. */
  const rollingMinute = (atUs: number): { requests: number; tokens: number } => {
    const inside = answered.filter((record) => record.atUs > atUs - minuteUs && record.atUs <= atUs);
    return { requests: inside.length, tokens: tokensOf(inside) };
  };
  const peaks = answered.map((record) => rollingMinute(record.atUs));
  const busiestMinuteTokens = Math.max(0, ...peaks.map((peak) => peak.tokens));
  const busiestMinuteRequests = Math.max(0, ...peaks.map((peak) => peak.requests));

  const lines = [
    paint(
      `LLM budget: ${number(LIMITS.requestsPerMinute)} requests and ${number(LIMITS.tokensPerMinute)} tokens a minute, ` +
        `${number(LIMITS.tokensPerDay)} tokens a day; ${WORKERS} workers share it for ${RUN_MINUTES} minutes`,
      '1',
    ),
    `  Store: ${run.store}. A minute lasts ${MINUTE / 1_000} s here; the limiter's windows are the provider's` +
      (run.allowanceMs === 0 ? '.' : ` plus ${run.allowanceMs} ms for the round trip to Redis.`),
    '',
    paint(`  Each minute, the tokens the provider counted (█), of ${number(LIMITS.tokensPerMinute)}`, '1'),
  ];
  for (let minute = 0; minute < RUN_MINUTES; minute += 1) {
    const inMinute = log.filter((record) => record.atUs >= startUs + minute * minuteUs && record.atUs < startUs + (minute + 1) * minuteUs);
    const tokens = tokensOf(inMinute);
    const filled = Math.min(BAR_WIDTH, Math.round((tokens / LIMITS.tokensPerMinute) * BAR_WIDTH));
    const bar = paint('█'.repeat(filled), '32') + paint('░'.repeat(BAR_WIDTH - filled), '2');
    const refused = inMinute.filter((record) => record.status === 429).length;
    const requests = `${String(inMinute.length - refused).padStart(3)} requests`;
    const refusals = paint(`${refused} × 429`, refused === 0 ? '32' : '31;1');
    lines.push(`  ${minute}:00  ${bar} ${number(tokens).padStart(7)} ${percent(tokens / LIMITS.tokensPerMinute).padStart(6)}  ${requests}  ${refusals}`);
  }

  // The rolling minute the provider enforces, at its fullest in each column: █ is the whole budget.
  const columns = RUN_MINUTES * COLUMNS_PER_MINUTE;
  const columnUs = minuteUs / COLUMNS_PER_MINUTE;
  const level = (share: number): string => LEVELS[Math.max(0, Math.min(LEVELS.length - 1, Math.ceil(share * LEVELS.length) - 1))] ?? ' ';
  let tokenRow = '';
  let requestRow = '';
  for (let column = 0; column < columns; column += 1) {
    const fromUs = startUs + column * columnUs;
    const stamps = answered.filter((record) => record.atUs >= fromUs && record.atUs < fromUs + columnUs).map((record) => record.atUs);
    const windows = [fromUs, ...stamps].map(rollingMinute);
    tokenRow += level(Math.max(...windows.map((window) => window.tokens)) / LIMITS.tokensPerMinute);
    requestRow += level(Math.max(...windows.map((window) => window.requests)) / LIMITS.requestsPerMinute);
  }
  const axis = Array.from({ length: columns + 1 }, (_, column) =>
    column === 0 ? '└' : column === columns ? '┘' : column % COLUMNS_PER_MINUTE === 0 ? '┴' : '─',
  ).join('');
  const labels = Array.from({ length: RUN_MINUTES + 1 }, (_, minute) => `${minute}:00`.padEnd(COLUMNS_PER_MINUTE)).join('');
  lines.push(
    '',
    paint(`  The provider's rolling minute at its fullest in each 5 s (█ = the limit)`, '1'),
    `  tokens    ${paint(tokenRow, '32')}`,
    `  requests  ${paint(requestRow, '36')}`,
    `            ${paint(axis, '2')}`,
    `            ${labels.trimEnd()}`,
    '',
    `  Provider: ${number(log.length)} requests, ${paint(`${rejected} answered 429`, rejected === 0 ? '32;1' : '31;1')}.`,
    `  TPM budget used: ${paint(percent(tpmShare), '1')} (${number(tokensUsed)} of the ${number(RUN_MINUTES * LIMITS.tokensPerMinute)} tokens ` +
      `${RUN_MINUTES} minutes allow); busiest rolling minute: ${number(busiestMinuteTokens)} tokens, ${busiestMinuteRequests} requests.`,
    `  Reserved ${number(tokensReserved)} tokens (prompts + max_tokens); settling gave ${number(tokensReserved - tokensUsed)} back ` +
      `(${percent((tokensReserved - tokensUsed) / tokensReserved)}).`,
    `  Tokens today: ${number(run.limiterDayTokens)} by the limiter's count, ${number(tokensUsed)} by the provider's, of ${number(LIMITS.tokensPerDay)}.`,
    `  Ran in ${(run.realMs / 1_000).toFixed(1)} s of real time.`,
  );
  return {
    store: run.store,
    requests: log.length,
    rejected,
    tokensUsed,
    tpmShare,
    busiestMinuteTokens,
    busiestMinuteRequests,
    tokensReserved,
    limiterDayTokens: run.limiterDayTokens,
    allowanceMs: run.allowanceMs,
    realMs: run.realMs,
    lines,
  };
}

/** Where the REDIS_URL points, without any user name or password it holds. */
function describeRedis(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'REDIS_URL';
  }
}

// Run as a program (not when a test imports `main`): fail loudly if the provider answered any 429.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const summary = await main({ redisUrl: process.env.REDIS_URL });
  if (summary.rejected > 0) {
    console.error(
      `The provider answered ${summary.rejected} requests 429: the limiter admitted them, yet they found the provider's window full ` +
        `(they reached it more than the allowance of ${summary.allowanceMs} ms after their admission, or the limiter admitted too much).`,
    );
    process.exitCode = 1;
  }
}
