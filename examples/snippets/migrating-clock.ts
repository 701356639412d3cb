import { RollingRateLimiter } from 'rolling-window-limiter';

// docs:begin
// rolling-rate-limiter's tests mock `microtime.now` to fake milliseconds from 0 (`setTime(0)`, `setTime(1)`, ...).
// A `clock` here returns microseconds since the epoch (a reading below 10^15 is refused): add the fake time to a start.
const START_US = Date.now() * 1000;
let fakeMs = 0;
const setTime = (ms: number): void => {
  fakeMs = ms;
};
const limiter = new RollingRateLimiter({ interval: '1m', maxInInterval: 2, clock: () => START_US + fakeMs * 1000 });

setTime(0);
console.log(await limiter.limit('id')); // false
setTime(1);
console.log(await limiter.limit('id')); // false
setTime(59_999);
console.log(await limiter.wouldLimit('id')); // true: two actions in the last minute
setTime(60_000);
console.log(await limiter.limit('id')); // false: the first left the window exactly a minute after it
// docs:end
