import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const logger = { warn: (fields: object, message: string) => console.log(message, Object.keys(fields).join(' ')) };
const alerts = { raise: (text: string) => console.log(`ALERT ${text}`) };

// docs:begin
import { subscribe } from 'node:diagnostics_channel';
import { CIRCUIT_CHANNEL, STORE_ERROR_CHANNEL, type CircuitMessage, type StoreErrorMessage } from 'rolling-window-limiter';

subscribe(STORE_ERROR_CHANNEL, (message) => {
  const { namespaces, error, policy } = message as StoreErrorMessage;
  logger.warn({ namespaces, code: error.code, policy, err: error }, 'rate limiter store failure');
});
subscribe(CIRCUIT_CHANNEL, (message) => {
  const { namespaces, state } = message as CircuitMessage;
  if (state === 'open') alerts.raise(`rate limiter ${namespaces.join('+')}: Redis unreachable, deciding by policy`);
});
// docs:end

// A Redis that is not there: a free port on loopback, no reconnection.
const { freePort } = await import('./support/free-port.js');
const down = new Redis({ port: await freePort(), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
down.on('error', () => {});
const limiter = new RollingRateLimiter({
  client: down,
  namespace: 'api',
  interval: 1_000,
  maxInInterval: 5,
  timeout: 250,
  onStoreError: 'allow',
  circuitBreaker: { failureThreshold: 1 },
});
await limiter.limit('user-1');
down.disconnect();
