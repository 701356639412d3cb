// rolling-window-limiter/hono in a module Worker (test/runtimes/workerd.test.ts
// bundles it and runs it in workerd without nodejs_compat): a Hono app whose
// `/api/*` routes are limited to 3 requests a minute per client IP (as
// `getConnInfo` of 'hono/cloudflare-workers' reports it: the CF-Connecting-IP
// header; an IPv6 client by its /56), the limiter on @upstash/redis from the
// Worker's bindings, made at the first request (a Worker's env arrives with
// it) and kept for the isolate's life.

import { Redis } from '@upstash/redis/cloudflare';
import { Hono } from 'hono';
import { getConnInfo } from 'hono/cloudflare-workers';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit, type RateLimitEnv } from '../../../src/http/hono/hono-middleware.js';

interface Env {
  readonly UPSTASH_REDIS_REST_URL: string;
  readonly UPSTASH_REDIS_REST_TOKEN: string;
  readonly NAMESPACE: string;
}

/** The app, with its limiter on the Worker's Redis. */
const appFor = (env: Env) =>
  new Hono<RateLimitEnv>()
    .use(
      '/api/*',
      rateLimit({
        limiter: new RollingRateLimiter({ client: Redis.fromEnv(env), namespace: env.NAMESPACE, interval: '1m', maxInInterval: 3, countBlocked: false }),
        policyName: () => 'api',
        connInfo: getConnInfo,
      }),
    )
    .get('/api/hello', (c) => c.json({ hello: 'world', remaining: c.var.rateLimit.actionsRemaining }));

let app: ReturnType<typeof appFor> | undefined;

export default {
  fetch(request: Request, env: Env): Response | Promise<Response> {
    app ??= appFor(env);
    return app.fetch(request, env);
  },
};
