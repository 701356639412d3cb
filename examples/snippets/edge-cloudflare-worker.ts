// Run as written in workerd (no nodejs_compat, module form), against an Upstash-compatible endpoint, by test/runtimes/edge-snippets.test.ts.
// A Cloudflare Worker (no nodejs_compat needed): 5 requests per 10 s per client IP,
// shared by every isolate and location through Upstash Redis over HTTP.
// docs:begin
import { Redis } from '@upstash/redis/cloudflare';
import { RollingRateLimiter } from 'rolling-window-limiter';

interface Env {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
}

let limiter: RollingRateLimiter | undefined; // made with the first request, which brings env

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    limiter ??= new RollingRateLimiter({
      client: Redis.fromEnv(env),
      namespace: 'api',
      interval: '10s',
      maxInInterval: 5,
      countBlocked: false,
    });
    const info = await limiter.limitWithInfo(request.headers.get('CF-Connecting-IP') ?? 'unknown');
    if (!info.blocked) return new Response(`Hello! ${info.actionsRemaining} more in this window.`);
    const retryAfter = Math.ceil(info.millisecondsUntilAllowed / 1000);
    return Response.json({ error: 'rate_limited', retryAfter }, { status: 429, headers: { 'Retry-After': String(retryAfter) } });
  },
};
// docs:end
