// A concurrent burst over real HTTP (loopback only) against express-rate-limit
// with RollingWindowStore and `skipFailedRequests: true`, in memory and on a
// real Redis (ioredis, node-redis): many requests in flight at once, a handler
// that fails some of them (a 500, given back, as every 429 is), and a check
// that no window of the limiter's length holds more than `limit` counted
// (successful) requests. Bounded: a fixed number of workers, each sending
// until a deadline or a request budget runs out.

import { expect } from 'chai';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { performance } from 'node:perf_hooks';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { serve, type RunningServer } from '../http-helpers.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('give-back-http');
const WINDOW_MS = 1_000;
const LIMIT = 5;
/** Requests in flight at once. */
const WORKERS = 24;
/** How long the burst lasts, and the most requests it sends. */
const BURST_MS = 2_500;
const MAX_REQUESTS = 4_000;
/** How long a refused request takes to be answered. */
const REFUSAL_DELAY_MS = 5;
/** Slack for the two clocks (the store's microsecond clock, performance.now()) to disagree. */
const CLOCK_SLACK_MS = 2;

/** A successful request: its hit was stamped between `before` (ahead of the limiter) and `after` (in the handler), in ms. */
interface Success {
  readonly before: number;
  readonly after: number;
}

/**
 * The most successes that certainly share one window: `limit + 1` successes
 * whose hits, wherever they were stamped within their bounds, lie less than
 * the window apart. Answers the largest such group it finds (1 when there is none).
 */
function mostCertainlyInOneWindow(successes: readonly Success[], windowMs: number): number {
  const byBefore = [...successes].sort((a, b) => a.before - b.before);
  let most = successes.length > 0 ? 1 : 0;
  byBefore.forEach((first, i) => {
    // With `first` the earliest of the group, the others are those stamped at the earliest at its `before`;
    // the group certainly fits when the latest `after` among them is less than the window past `first.before`.
    const afters = byBefore
      .slice(i)
      .map((success) => success.after)
      .sort((a, b) => a - b);
    const fitting = afters.filter((after) => after - first.before < windowMs - CLOCK_SLACK_MS).length;
    most = Math.max(most, fitting);
  });
  return most;
}

forEachStoreBackend('RollingWindowStore over HTTP with skipFailedRequests, a concurrent burst', (backend) => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it(`never counts more than ${LIMIT} successful requests in any ${WINDOW_MS} ms`, async function () {
    this.timeout(30_000);
    const successes: Success[] = [];
    const app = express();
    app.use((_req, res, next) => {
      res.locals.before = performance.now();
      next();
    });
    app.use(
      rateLimit({
        windowMs: WINDOW_MS,
        limit: LIMIT,
        skipFailedRequests: true,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        // A refusal answered a moment later (as a handler that logs or looks something up first does): many refused
        // requests are then counted and not yet given back at once.
        handler: (_req, res) => void setTimeout(() => res.status(429).send('Too many requests'), REFUSAL_DELAY_MS),
        store: new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) }),
      }),
    );
    app.get('/', (req, res) => {
      if (Number(req.query.n) % 3 === 0) {
        res.status(500).send('failed'); // given back
        return;
      }
      successes.push({ before: res.locals.before as number, after: performance.now() });
      res.send('ok');
    });
    server = await serve(app);
    const url = server.url;

    const statuses = new Map<number, number>();
    let sent = 0;
    const deadline = performance.now() + BURST_MS;
    const worker = async (): Promise<void> => {
      while (performance.now() < deadline && sent < MAX_REQUESTS) {
        const n = sent;
        sent += 1;
        const response = await fetch(`${url}/?n=${n}`, { signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));

    expect(statuses.get(429) ?? 0, 'the burst was refused in part').to.be.greaterThan(0);
    expect(statuses.get(500) ?? 0, 'some requests failed').to.be.greaterThan(0);
    expect(successes.length, 'some requests succeeded').to.be.at.least(LIMIT);
    expect(mostCertainlyInOneWindow(successes, WINDOW_MS), `successful requests in one ${WINDOW_MS} ms window`).to.be.at.most(LIMIT);
  });
});
