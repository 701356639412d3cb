import { RollingRateLimiter } from 'rolling-window-limiter';

// docs:begin
let now = Date.now() * 1000; // microseconds
const limiter = new RollingRateLimiter({ interval: 1_000, maxInInterval: 2, clock: () => now });

await limiter.limit('a'); // false
await limiter.limit('a'); // false
await limiter.limit('a'); // true: two already in the last second
now += 1_000_000; // one second later, in microseconds
await limiter.limit('a'); // false: an action stops counting exactly `interval` after it happened
// docs:end

// The same calls, checked.
now += 1_000_000;
const answers = [await limiter.limit('b'), await limiter.limit('b'), await limiter.limit('b')];
now += 1_000_000;
answers.push(await limiter.limit('b'));
console.log(answers.join(' '));
