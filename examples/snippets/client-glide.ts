import { GlideClient, Logger } from '@valkey/valkey-glide';
import { RollingRateLimiter } from 'rolling-window-limiter';

const server = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'); // Redis or Valkey
// GLIDE logs every error reply at WARN, such as the NOSCRIPT that makes the limiter send its script the first time.
Logger.setLoggerConfig('error');
// GLIDE's own requestTimeout defaults to 250 ms: let the limiter's `timeout` (2 s by default) be the one that counts.
const client = await GlideClient.createClient({ addresses: [{ host: server.hostname, port: Number(server.port) }], requestTimeout: 5000 });
const limiter = new RollingRateLimiter({ client, namespace: `glide-demo-${Date.now()}`, interval: 1000, maxInInterval: 2 });
console.log(await limiter.limit('user-1'), await limiter.limit('user-1'), await limiter.limit('user-1'));
client.close();
// A cluster: const client = await GlideClusterClient.createClient({ addresses: [{ host: '10.0.0.1', port: 6379 }], requestTimeout: 5000 });
