// Run by `npm test` and .ci/run: the Redis tests need a real server, either REDIS_URL or redis-server and
// redis-cli on PATH (as root on Debian/Ubuntu, Debian's package is installed, without starting a system
// service); otherwise this says how to install Redis and exits 1.
import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { ensurePackage } from './system-tools.mjs';

/** Debian asks policy-rc.d before starting a service; 101 forbids it, so no system Redis takes port 6379. */
function withServiceStartsDenied(install) {
  const policy = '/usr/sbin/policy-rc.d';
  if (existsSync(policy)) return install(); // an existing policy is left as it is
  writeFileSync(policy, '#!/bin/sh\n# Temporary, written by scripts/ensure-redis-server.mjs.\nexit 101\n', { mode: 0o755 });
  try {
    return install();
  } finally {
    unlinkSync(policy);
  }
}

process.exitCode = process.env.REDIS_URL
  ? 0
  : ensurePackage({
      who: 'ensure-redis-server',
      pkg: 'redis-server',
      commands: ['redis-server', 'redis-cli'],
      wrap: withServiceStartsDenied,
      instructions: `redis-server is not installed, and the tests need a real Redis server.
Install it, then run \`npm test\` again:
  Debian/Ubuntu:  sudo apt-get install redis-server
  macOS:          brew install redis
Or use a Redis server you already run:
  REDIS_URL=redis://127.0.0.1:6379 npm test
  (warning: the tests write and delete keys on that server; do not point it at data you care about)`,
    });
