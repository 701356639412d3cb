// Install guard run by `npm test` before mocha: makes sure the Redis tests have
// a real server to talk to. Either the user brings one (REDIS_URL), or
// redis-server and redis-cli are on PATH, or (Debian/Ubuntu, as root) we install
// Debian's redis-server package without letting it start a system service.
// Otherwise it prints how to install Redis and exits 1. No dependencies.

import { spawnSync } from 'node:child_process';
import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import { isOnPath, isRoot, run } from './system-tools.mjs';

/** Debian's hook that invoke-rc.d / deb-systemd-invoke ask before starting a service. */
const POLICY_RC_D = '/usr/sbin/policy-rc.d';

/** A policy-rc.d that denies every service action (101 = "action forbidden"). */
const DENY_ALL_SERVICES = '#!/bin/sh\n# Temporary, written by scripts/ensure-redis-server.mjs.\nexit 101\n';

const INSTALL_INSTRUCTIONS = [
  'redis-server is not installed, and the tests need a real Redis server.',
  'Install it, then run `npm test` again:',
  '  Debian/Ubuntu:  sudo apt-get install redis-server',
  '  macOS:          brew install redis',
  'Or use a Redis server you already run:',
  '  REDIS_URL=redis://127.0.0.1:6379 npm test',
  '  (warning: the tests write and delete keys on that server; do not point it at data you care about)',
].join('\n');

/**
 * Runs `action` with a policy-rc.d that forbids starting services, so the
 * package's post-install does not start a system Redis on port 6379.
 * An existing policy-rc.d is left exactly as it is.
 */
function withServiceStartsDenied(action) {
  if (existsSync(POLICY_RC_D)) return action();
  writeFileSync(POLICY_RC_D, DENY_ALL_SERVICES, { mode: 0o755 });
  try {
    return action();
  } finally {
    unlinkSync(POLICY_RC_D);
  }
}

function installWithAptGet() {
  console.log('ensure-redis-server: redis-server is missing; installing it with `apt-get install redis-server` (Debian\'s package).');
  const noPrompts = { DEBIAN_FRONTEND: 'noninteractive' };
  return withServiceStartsDenied(() => {
    if (!run('ensure-redis-server', 'apt-get', ['update'], noPrompts)) {
      console.warn('ensure-redis-server: `apt-get update` failed; trying the install with the package lists we have.');
    }
    return run('ensure-redis-server', 'apt-get', ['install', '-y', '--no-install-recommends', 'redis-server'], noPrompts);
  });
}

function redisServerRuns() {
  const result = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return result.status === 0;
}

function main() {
  if (process.env.REDIS_URL) return 0;
  if (isOnPath('redis-server') && isOnPath('redis-cli')) return 0;

  if (isOnPath('apt-get') && isRoot()) {
    if (installWithAptGet() && redisServerRuns()) {
      console.log('ensure-redis-server: redis-server is installed (no service was started).');
      return 0;
    }
    console.error('ensure-redis-server: installing redis-server with apt-get failed (see the output above).');
    console.error(INSTALL_INSTRUCTIONS);
    return 1;
  }

  console.error(INSTALL_INSTRUCTIONS);
  return 1;
}

process.exitCode = main();
