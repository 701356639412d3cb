// A fresh process for test/options/no-silent-traps.test.ts: makes one limiter
// per options object of its argument (a JSON list), in order, and prints as
// JSON every warning the process got (`process.on('warning')`) and every
// message of the warning channel. The warnings about durations are given once
// per process, so each scenario needs a process of its own.

import { subscribe } from 'node:diagnostics_channel';
import { setImmediate as turn } from 'node:timers/promises';
import { RollingRateLimiter, WARNING_CHANNEL, type RollingRateLimiterOptions } from '../../src/index.js';

const warnings: { name: string; code: string | undefined; message: string }[] = [];
process.on('warning', (warning: Error & { code?: string }) => warnings.push({ name: warning.name, code: warning.code, message: warning.message }));
const published: unknown[] = [];
subscribe(WARNING_CHANNEL, (message) => published.push(message));

const made: (string | true)[] = [];
for (const options of JSON.parse(process.argv[2] ?? '[]') as RollingRateLimiterOptions[]) {
  try {
    new RollingRateLimiter(options);
    made.push(true);
  } catch (error) {
    made.push((error as Error).name);
  }
}
await turn(); // process.emitWarning tells its listeners on the next tick
console.log(JSON.stringify({ made, warnings, published }));
