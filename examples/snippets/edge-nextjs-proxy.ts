// Run as written in a real Next.js app (`next build`, `next start`) by test/runtimes/next-app.test.ts.
// proxy.ts of a Next.js 16 app, on Node.js: 5 requests per 10 s per client IP on /api/*,
// shared by every instance through Upstash Redis over HTTP.
// docs:begin
import { Redis } from '@upstash/redis';
import { NextResponse, type NextRequest } from 'next/server';
import { RollingRateLimiter } from 'rolling-window-limiter';

const limiter = new RollingRateLimiter({
  client: Redis.fromEnv(), // UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN
  namespace: 'api',
  interval: '10s',
  maxInInterval: 5,
  countBlocked: false,
  batch: true, // concurrent requests: one script call
});

export async function proxy(request: NextRequest): Promise<Response> {
  const ip = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() || 'unknown';
  const info = await limiter.limitWithInfo(ip);
  if (!info.blocked) return NextResponse.next({ headers: { 'X-RateLimit-Remaining': String(info.actionsRemaining) } });
  const retryAfter = Math.ceil(info.millisecondsUntilAllowed / 1000);
  return NextResponse.json({ error: 'rate_limited', retryAfter }, { status: 429, headers: { 'Retry-After': String(retryAfter) } });
}

export const config = { matcher: '/api/:path*' };
// docs:end
