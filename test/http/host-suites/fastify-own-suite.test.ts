// @fastify/rate-limit's own test files, as the plugin ships them, run with
// rollingWindowStore in place of its default LocalStore: in memory, and on a
// real redis-server through ioredis. Each file runs in its own `node` process
// (node:test, TAP output) with fastify-own-suite-preload.ts loaded first, which
// hands the plugin our store wherever a test gives none. Every upstream test
// must pass, except the ones listed in EXPECTED_DIFFERENCES, where a rolling
// window that counts every hit answers differently from a fixed window by
// design; each of those must still fail, so the list stays true.
// docs/http.md says which files run and why the listed tests differ.

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./fastify-own-suite-preload.ts', import.meta.url));
const UPSTREAM_TESTS = join(dirname(createRequire(import.meta.url).resolve('@fastify/rate-limit')), 'test');

/**
 * The upstream files that use the plugin's default store. Left out:
 * redis-rate-limit.test.js and local-store-close.test.js, which test the
 * plugin's own RedisStore and LocalStore.
 */
const UPSTREAM_FILES = [
  'global-rate-limit.test.js',
  'route-rate-limit.test.js',
  'group-rate-limit.test.js',
  'create-rate-limit.test.js',
  'not-found-handler-rate-limited.test.js',
  'ip-normalization.test.js',
  'exponential-backoff.test.js',
  'github-issues/issue-207.test.js',
  'github-issues/issue-215.test.js',
  'github-issues/issue-284.test.js',
] as const;

type UpstreamFile = (typeof UPSTREAM_FILES)[number];

const EVERY_HIT = "every hit counts, refused ones too (the plugin's continueExceeding, always on)";
const BAN = 'over the limit the count reads max + 1, so `ban` takes effect only as `ban: 0`';
const BACKOFF = "exponentialBackoff stretches a fixed window's TTL: rollingWindowStore refuses it at construction";

/** Upstream tests that answer differently by design, by file and test name, each with the reason. */
const EXPECTED_DIFFERENCES: Readonly<Partial<Record<UpstreamFile, Readonly<Record<string, string>>>>> = {
  'global-rate-limit.test.js': {
    'When passing NaN to the timeWindow property then the timeWindow should be the default value - 60 seconds': `the refused request at 55 s still counts at 60 s, where a fixed window resets all at once (${EVERY_HIT})`,
    'With onBanReach option': BAN,
    'With ban': BAN,
    'afterReset and Rate Limit remain the same when enableDraftSpec is enabled': `ratelimit-reset reads 10 s after the refused hits at 0.5 s and 1.5 s, until the last of them leaves, not the fixed window's 9 s (${EVERY_HIT})`,
  },
  'route-rate-limit.test.js': {
    'With ban': BAN,
  },
  'create-rate-limit.test.js': {
    'With custom rate limit options': `isBanned stays false with ban: 1: ${BAN}`,
    'With { increment: false } and exponentialBackoff the peek reports the base window without escalating it': BACKOFF,
  },
  'exponential-backoff.test.js': {
    'Exponential Backoff': BACKOFF,
    'Global Exponential Backoff': BACKOFF,
    'MAx safe Exponential Backoff': BACKOFF,
  },
  'github-issues/issue-215.test.js': {
    'issue #215 - when using local store, 2nd user should not be rate limited when the time window is passed for the 1st user': `the second client's refused request at 6 s still counts at 8.1 s in its 5 s window (${EVERY_HIT})`,
  },
};

/** A file's run may take this long before it is killed (its own PID). */
const FILE_LIMIT_MS = 120_000;

/** One top-level test of a TAP stream: its name, whether it passed (or was skipped upstream), and its diagnostic block. */
interface TapResult {
  readonly name: string;
  readonly ok: boolean;
  readonly skipped: boolean;
  readonly details: string;
}

/** How one upstream file ran. */
interface FileRun {
  readonly results: readonly TapResult[];
  /** The number of top-level tests the stream announced (`1..N`). */
  readonly planned: number | undefined;
  readonly output: string;
}

/** Reads the top-level test points of node:test's TAP output (subtests are indented, so they are left out). */
function parseTap(output: string): { results: TapResult[]; planned: number | undefined } {
  const results: TapResult[] = [];
  let planned: number | undefined;
  let current: { name: string; ok: boolean; skipped: boolean; details: string[] } | undefined;
  const close = (): void => {
    if (current !== undefined) results.push({ ...current, details: current.details.join('\n') });
    current = undefined;
  };
  for (const line of output.split('\n')) {
    const point = /^(not ok|ok) \d+ - (.*?)( # (?:SKIP|TODO)\b.*)?$/.exec(line);
    const plan = /^1\.\.(\d+)$/.exec(line);
    if (point !== null) {
      close();
      const name = (point[2] as string).replace(/\\([\\#])/g, '$1');
      current = { name, ok: point[1] === 'ok', skipped: point[3] !== undefined, details: [] };
    } else if (plan !== null) {
      close();
      planned = Number(plan[1]);
    } else if (/^\S/.test(line)) {
      close();
    } else if (current !== undefined) {
      current.details.push(line);
    }
  }
  close();
  return { results, planned };
}

/** Runs one upstream file with the preload, in memory or on `redisUrl`. */
function runUpstreamFile(file: UpstreamFile, redisUrl: string | undefined): Promise<FileRun> {
  const args = ['--import', 'tsx', '--import', PRELOAD, '--test-reporter=tap', join(UPSTREAM_TESTS, file)];
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['OWN_SUITE_REDIS_URL'];
  if (redisUrl !== undefined) env['OWN_SUITE_REDIS_URL'] = redisUrl;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: REPO_ROOT, env, timeout: FILE_LIMIT_MS, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        // A failing test ends the process with code 1: expected for the listed tests, judged below.
        if (error !== null && (error.killed || typeof error.code !== 'number')) {
          reject(new Error(`${file} did not finish within ${FILE_LIMIT_MS} ms (${error.message})\n${stdout}\n${stderr}`));
          return;
        }
        resolve({ ...parseTap(stdout), output: `${stdout}\n${stderr}` });
      },
    );
  });
}

/** Passed and expected-difference counts of one backend, printed once its files have run. */
interface Tally {
  passed: number;
  differences: number;
  /** Skipped upstream (`test.skip`), so run by neither the plugin nor us. */
  skipped: number;
}

function checkFile(file: UpstreamFile, run: FileRun, tally: Tally): void {
  const expected = EXPECTED_DIFFERENCES[file] ?? {};
  expect(run.results.length, `${file}: no test results in\n${run.output}`).to.be.greaterThan(0);
  expect(run.results.length, `${file}: ran ${run.results.length} of the ${run.planned} tests it announced`).to.equal(run.planned);
  const unexpected = run.results.filter((result) => !result.ok && !(result.name in expected));
  const names = new Set(run.results.map((result) => result.name));
  const missing = Object.keys(expected).filter((name) => !names.has(name));
  const nowPassing = run.results.filter((result) => result.ok && result.name in expected);
  const report = [
    ...unexpected.map((result) => `fails, and is not a listed difference: ${result.name}\n${result.details}`),
    ...missing.map((name) => `listed as a difference, but no longer in the file: ${name}`),
    ...nowPassing.map((result) => `listed as a difference, but passes now (take it off the list): ${result.name}`),
  ];
  expect(report, `${file}:\n${report.join('\n')}`).to.deep.equal([]);
  tally.passed += run.results.filter((result) => result.ok && !result.skipped).length;
  tally.skipped += run.results.filter((result) => result.skipped).length;
  tally.differences += run.results.filter((result) => !result.ok).length;
}

function describeBackend(name: string, redisUrl: () => string | undefined): void {
  describe(`@fastify/rate-limit's own test files with rollingWindowStore, ${name}`, function () {
    this.timeout(FILE_LIMIT_MS + 10_000);
    const tally: Tally = { passed: 0, differences: 0, skipped: 0 };
    after(() => {
      console.log(
        `      @fastify/rate-limit's own suite, ${name}: ${tally.passed} passed, ${tally.differences} expected differences (${tally.skipped} skipped upstream)`,
      );
    });
    for (const file of UPSTREAM_FILES) {
      it(file, async () => {
        checkFile(file, await runUpstreamFile(file, redisUrl()), tally);
      });
    }
  });
}

describe('parseTap', () => {
  it('reads top-level test points, unescapes names, and keeps subtests out', () => {
    const tap = [
      'TAP version 13',
      '# Subtest: a \\# b',
      '    ok 1 - inner',
      'ok 1 - a \\# b',
      'not ok 2 - c',
      '  ---',
      '  error: boom',
      '  ...',
      'ok 3 - d # SKIP',
      '1..3',
      '# pass 1',
    ].join('\n');
    const { results, planned } = parseTap(tap);
    expect(planned).to.equal(3);
    expect(results.map((result) => [result.name, result.ok, result.skipped])).to.deep.equal([
      ['a # b', true, false],
      ['c', false, false],
      ['d', true, true],
    ]);
    expect(results[1]?.details).to.include('error: boom');
  });
});

describeBackend('in memory', () => undefined);

describe('on a real redis-server through ioredis', function () {
  this.timeout(60_000);
  let redis: UsedRedis | undefined;
  before(async () => {
    redis = await useRedis();
  });
  after(async () => {
    await redis?.stop();
  });
  describeBackend('on Redis', () => {
    if (redis === undefined) throw new Error('the redis-server of this describe block has not started yet');
    return redis.url;
  });
});
