import { RateLimitedError, RollingRateLimiter } from 'rolling-window-limiter';

interface User {
  id: string;
}
interface Order {
  item: string;
}
interface Reply {
  status(code: number): { send(body: unknown): string };
}
async function placeOrder(user: User, order: Order): Promise<string> {
  return `${user.id} ordered ${order.item}`;
}
const reply: Reply = { status: (code) => ({ send: (body) => `${code} ${JSON.stringify(body)}` }) };

// docs:begin
// No double submissions: at most 2 per 5 s per user and operation
const guard = new RollingRateLimiter({ namespace: 'submit', interval: 5_000, maxInInterval: 2 });
const submitOrder = guard.wrap(placeOrder, { id: (user: User) => `${user.id}:placeOrder` });
// docs:end

async function handle(user: User, order: Order): Promise<string> {
  // docs:begin call
  try {
    return await submitOrder(user, order);
  } catch (error) {
    if (error instanceof RateLimitedError) {
      const { info } = error as RateLimitedError; // `instanceof` leaves the type of `info` open
      return reply.status(429).send({ retryInMs: info.millisecondsUntilAllowed });
    }
    throw error;
  }
  // docs:end
}

const ada = { id: 'ada' };
console.log(await handle(ada, { item: 'tea' }));
console.log(await handle(ada, { item: 'tea' }));
console.log((await handle(ada, { item: 'tea' })).replace(/\d+}$/, 'N}'));
