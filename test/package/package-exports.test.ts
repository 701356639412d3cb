// The built package works for both kinds of consumer: `require` gets the
// CommonJS build and `import` the ES module build, through the `exports` map
// (resolved here by the package's own name).

import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

describe('the built package', () => {
  before(function () {
    this.timeout(120_000);
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'pipe' });
  });

  it('can be required (CommonJS) and limits', async () => {
    const require = createRequire(import.meta.url);
    const resolved = require.resolve('rolling-window-limiter');
    expect(resolved).to.match(/dist[\\/]cjs[\\/]index\.js$/);
    const { RollingRateLimiter, isRateLimiterError } = require('rolling-window-limiter') as typeof import('../../src/index.js');
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 1 });
    expect(await limiter.limit('a')).to.equal(false);
    expect(await limiter.limit('a')).to.equal(true);
    expect(isRateLimiterError).to.be.a('function');
  });

  it('can be imported (ES module) and shares error identity across builds through the brand', async () => {
    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { RollingRateLimiter, isRateLimiterError } from 'rolling-window-limiter';
         import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
         const cjs = createRequire(import.meta.url)('rolling-window-limiter');
         const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 1 });
         const first = await limiter.limit('a');
         const second = await limiter.limit('a');
         const crossBuild = isRateLimiterError(new cjs.StoreError('x'));
         console.log(JSON.stringify({ first, second, crossBuild, url: import.meta.resolve('rolling-window-limiter') }));`,
      ],
      { encoding: 'utf8' },
    );
    const result = JSON.parse(output) as { first: boolean; second: boolean; crossBuild: boolean; url: string };
    expect(result).to.include({ first: false, second: true, crossBuild: true });
    expect(result.url).to.match(/dist\/esm\/index\.js$/);
  });

  it('resolves rolling-window-limiter/hono to each build, and requires nothing of Hono to load', () => {
    const require = createRequire(import.meta.url);
    expect(require.resolve('rolling-window-limiter/hono')).to.match(/dist[\\/]cjs[\\/]http[\\/]hono[\\/]hono-middleware\.js$/);
    const { rateLimit } = require('rolling-window-limiter/hono') as typeof import('../../src/http/hono/hono-middleware.js');
    expect(rateLimit).to.be.a('function');
    for (const file of ['cjs/http/hono/hono-middleware', 'cjs/http/hono/hono-options', 'esm/http/hono/hono-middleware', 'esm/http/hono/hono-options']) {
      const source = readFileSync(new URL(`../../dist/${file}.js`, import.meta.url), 'utf8');
      expect(source, `dist/${file}.js: Hono is only types`).to.not.match(/^(import|export|const|var|let)\b.*["'](hono|@hono\/)/m);
    }
  });

  it('serves rolling-window-limiter/nestjs to require and import', () => {
    const require = createRequire(import.meta.url);
    expect(require.resolve('rolling-window-limiter/nestjs')).to.match(/dist[\\/]cjs[\\/]integrations[\\/]nestjs[\\/]index\.js$/);
    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
         const require = createRequire(import.meta.url);
         const esm = await import('rolling-window-limiter/nestjs');
         const cjs = require('rolling-window-limiter/nestjs');
         const storage = new esm.RollingWindowThrottlerStorage();
         const record = await storage.increment('k', 1000, 1, 0, 'default');
         console.log(JSON.stringify({ esm: Object.keys(esm).sort(), cjs: typeof cjs.RollingWindowGuard, record,
           url: import.meta.resolve('rolling-window-limiter/nestjs') }));`,
      ],
      { encoding: 'utf8' },
    );
    const result = JSON.parse(output) as { esm: string[]; cjs: string; record: object; url: string };
    expect(result.esm).to.include.members(['RollingWindowThrottlerStorage', 'RollingWindowGuard', 'RateLimit', 'ipKey']);
    expect(result.cjs).to.equal('function');
    expect(result.record).to.deep.equal({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 });
    expect(result.url).to.match(/dist\/esm\/integrations\/nestjs\/index\.js$/);
  });

  it('serves rolling-window-limiter/otel to require and import', () => {
    const require = createRequire(import.meta.url);
    expect(require.resolve('rolling-window-limiter/otel')).to.match(/dist[\\/]cjs[\\/]integrations[\\/]otel[\\/]index\.js$/);
    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createRequire } from 'node:module';
         const esm = await import('rolling-window-limiter/otel');
         const cjs = createRequire(import.meta.url)('rolling-window-limiter/otel');
         const stop = esm.registerRateLimiterMetrics();
         stop();
         console.log(JSON.stringify({ esm: Object.keys(esm).sort(), cjs: typeof cjs.registerRateLimiterMetrics,
           url: import.meta.resolve('rolling-window-limiter/otel') }));`,
      ],
      { encoding: 'utf8' },
    );
    const result = JSON.parse(output) as { esm: string[]; cjs: string; url: string };
    expect(result.esm).to.deep.equal(['ATTRIBUTE_NAMES', 'DECISION_DURATION_BUCKETS', 'METER_NAME', 'METRIC_NAMES', 'registerRateLimiterMetrics']);
    expect(result.cjs).to.equal('function');
    expect(result.url).to.match(/dist\/esm\/integrations\/otel\/index\.js$/);
  });
});

describe('the exports map', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, unknown>;
  };

  it('names only the conditions Node and TypeScript resolve, each leading to a file in dist', () => {
    const conditions = new Set(['import', 'require', 'types', 'default']);
    const walk = (where: string, entry: unknown): void => {
      if (typeof entry === 'string') {
        expect(entry, where).to.match(/^\.\/(dist\/|package\.json$)/);
        return;
      }
      expect(entry, where).to.be.an('object');
      for (const [condition, target] of Object.entries(entry as Record<string, unknown>)) {
        expect(conditions.has(condition), `${where}: unknown condition "${condition}"`).to.equal(true);
        walk(`${where}.${condition}`, target);
      }
    };
    for (const [subpath, entry] of Object.entries(manifest.exports)) walk(`exports["${subpath}"]`, entry);
  });
});
