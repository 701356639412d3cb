import { callModel, countTokens } from './support/fake-model.js';

const MAX_ANSWER_TOKENS = 4_000;

// docs:begin
import { Hono } from 'hono';
import { RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/hono';

const tokens = new RollingRateLimiter({ namespace: 'chat:tokens', interval: '1m', maxCostInInterval: 10_000, countBlocked: false });

const app = new Hono()
  .use(
    '/chat',
    rateLimit({
      limiter: tokens,
      key: (c) => c.req.header('x-user-id'),
      // An async cost: Hono keeps the parsed body, so the handler reads it again.
      cost: async (c) => countTokens((await c.req.json<{ prompt: string }>()).prompt) + MAX_ANSWER_TOKENS,
    }),
  )
  .post('/chat', async (c) => {
    const reply = await callModel((await c.req.json<{ prompt: string }>()).prompt, MAX_ANSWER_TOKENS);
    await c.var.rateLimit.settle(reply.usage.totalTokens);
    return c.json({ answer: reply.text, usedTokens: reply.usage.totalTokens });
  });
// docs:end

for (const prompt of ['What is a rolling window?', 'And a sliding log?']) {
  const response = await app.request('/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user-id': 'ada' },
    body: JSON.stringify({ prompt }),
  });
  console.log(response.status, response.headers.get('ratelimit'), await response.text());
}
