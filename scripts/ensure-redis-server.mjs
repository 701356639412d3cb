// Run by `npm test` and .ci/run: the Redis tests need a real server, either REDIS_URL or redis-server and
// redis-cli on PATH (as root on Debian/Ubuntu, Debian's package is installed, without starting a system
// service); otherwise this says how to install Redis and exits 1. Then it does the same for Valkey 8
// (ensure-valkey-server.mjs), which the contract also runs against.
import { spawnSync } from 'node:child_process';
import { ensurePackage, findOnPath } from './system-tools.mjs';
import { ensureValkeyServer, withServiceStartsDenied } from './ensure-valkey-server.mjs';

/** `<command> --version`'s version (`7.0.15`), or undefined when it is not on PATH or does not run. */
function versionOf(command) {
  if (!findOnPath(command)) return undefined;
  const result = spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0 ? (/v=(\d+\.\d+\.\d+)/.exec(result.stdout)?.[1] ?? result.stdout.trim()) : undefined;
}

const redis = process.env.REDIS_URL
  ? 0
  : ensurePackage({
      who: 'ensure-redis-server',
      pkg: 'redis-server',
      commands: ['redis-server', 'redis-cli'],
      wrap: (install) => withServiceStartsDenied(install, 'scripts/ensure-redis-server.mjs'),
      instructions: `redis-server is not installed, and the tests need a real Redis server.
Install it, then run \`npm test\` again:
  Debian/Ubuntu:  sudo apt-get install redis-server
  macOS:          brew install redis
Or use a Redis server you already run:
  REDIS_URL=redis://127.0.0.1:6379 npm test
  (warning: the tests write and delete keys on that server; do not point it at data you care about)`,
    });
const valkey = ensureValkeyServer();
const servers = ['redis-server', 'valkey-server'].flatMap((command) => {
  const version = versionOf(command);
  return version === undefined ? [] : [`${command} ${version}`];
});
if (servers.length > 0) console.log(`ensure-redis-server: on PATH: ${servers.join(', ')}.`);
process.exitCode = redis !== 0 ? redis : valkey;
