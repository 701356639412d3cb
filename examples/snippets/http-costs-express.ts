import { callModel, countTokens } from './support/fake-model.js';
import { freePort } from './support/free-port.js';

// The docs' code serves on PORT: a free one for this run.
process.env.PORT = String(await freePort());

// docs:begin
import express from 'express';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit, type RequestRateLimit } from 'rolling-window-limiter/express';

// Per user, 20 calls and 10,000 tokens a minute, decided together. In memory here; with `client: redis` every
// process shares them.
const calls = new RollingRateLimiter({ namespace: 'chat:calls', interval: '1m', maxInInterval: 20, countBlocked: false });
const tokens = new RollingRateLimiter({ namespace: 'chat:tokens', interval: '1m', maxCostInInterval: 10_000, countBlocked: false });
const MAX_ANSWER_TOKENS = 4_000;

const app = express();
app.use(express.json());
app.post(
  '/chat',
  rateLimit({
    limiter: new RateLimiterStack([calls, tokens]),
    key: (req) => req.get('x-user-id'),
    // Reserve the most the call may use: the prompt's tokens, plus the answer's cap.
    cost: (req) => countTokens((req.body as { prompt: string }).prompt) + MAX_ANSWER_TOKENS,
  }),
  async (req, res) => {
    const reply = await callModel((req.body as { prompt: string }).prompt, MAX_ANSWER_TOKENS);
    // Settle to what it used: the rest of the reservation is back in the budget at once.
    await (res.locals.rateLimit as RequestRateLimit).settle(reply.usage.totalTokens);
    res.json({ answer: reply.text, usedTokens: reply.usage.totalTokens });
  },
);
const server = app.listen(Number(process.env.PORT ?? 3000));
// docs:end

// Two short questions, two stories that use their whole cap, and one more question, which no longer fits.
await new Promise((listening) => server.once('listening', listening));
for (const prompt of ['What is a rolling window?', 'And a sliding log?', 'Tell me a long story', 'Another long story, please', 'What is left?']) {
  const response = await fetch(`http://127.0.0.1:${process.env.PORT}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user-id': 'ada' },
    body: JSON.stringify({ prompt }),
  });
  const outcome = response.ok ? await response.text() : `Retry-After: ${response.headers.get('retry-after')}`;
  console.log(response.status, response.headers.get('ratelimit'), outcome);
}
server.close();
