// `rolling-window-limiter/nestjs` without @nestjs/throttler: @RateLimit and
// RollingWindowGuard need only @nestjs/common and @nestjs/core, so the entry
// must load, and a Nest application must limit with them, where
// @nestjs/throttler cannot be resolved. A child process hides the package
// from both loaders before it imports the entry: `require` (Module's
// resolver) and `import` (a resolve hook) both report it not found, as on an
// application that never installed it. Only building
// RollingWindowThrottlerGuard, which extends its ThrottlerGuard, fails, and
// says what to install.
//
// And the README's NestJS example run as an ES module under tsx
// (`npx tsx examples/nestjs-api.ts`), where @nestjs/throttler gets a second
// copy of @nestjs/core: RollingWindowThrottlerGuard names what it injects and
// makes its own Reflector, so the application starts.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** Longer than a child needs by far; past it the child is killed (its own PID) and the test fails. */
const RUN_TIMEOUT_MS = 60_000;

/** Runs `node ...args` in the repository, to its end. */
function run(args: readonly string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: REPO, timeout: RUN_TIMEOUT_MS, encoding: 'utf8', env: { ...process.env, REDIS_URL: '' } },
      (error, stdout, stderr) => resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Makes @nestjs/throttler unresolvable to `require` and to `import` in this process, from here on. */
const HIDE_THROTTLER = `
import Module, { register } from 'node:module';
const hidden = (request) => request === '@nestjs/throttler' || request.startsWith('@nestjs/throttler/');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (hidden(request)) throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: 'MODULE_NOT_FOUND' });
  return resolveFilename.call(this, request, ...rest);
};
register('data:text/javascript,' + encodeURIComponent(\`
  export async function resolve(specifier, context, next) {
    if (specifier === '@nestjs/throttler' || specifier.startsWith('@nestjs/throttler/')) {
      throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    return next(specifier, context);
  }\`));
const hiddenFromRequire = (() => { try { Module.createRequire(process.cwd() + '/')('@nestjs/throttler'); return false; } catch (e) { return e.code === 'MODULE_NOT_FOUND'; } })();
const hiddenFromImport = await import('@nestjs/throttler').then(() => false, (e) => e.code === 'ERR_MODULE_NOT_FOUND');
`;

/** With @nestjs/throttler hidden: a Nest application on Express with @RateLimit and RollingWindowGuard, two orders, and the throttler guard built. */
const WITHOUT_THROTTLER = `${HIDE_THROTTLER}
import 'reflect-metadata';
const { Controller, Module: NestModule, Post, UseGuards } = await import('@nestjs/common');
const { NestFactory } = await import('@nestjs/core');
const nest = await import('./src/integrations/nestjs/index.ts');

class OrdersController {
  create() {
    return { ordered: true };
  }
}
const create = Object.getOwnPropertyDescriptor(OrdersController.prototype, 'create');
nest.RateLimit({ interval: '1m', maxInInterval: 5, minDifference: '2s' })(OrdersController.prototype, 'create', create);
Post()(OrdersController.prototype, 'create', create);
UseGuards(new nest.RollingWindowGuard({ namespace: 'orders' }))(OrdersController);
Controller('orders')(OrdersController);
class AppModule {}
NestModule({ controllers: [OrdersController] })(AppModule);

const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
await app.listen(0, '127.0.0.1');
const url = await app.getUrl();
const orders = [];
for (let i = 0; i < 2; i++) {
  const response = await fetch(url + '/orders', { method: 'POST' });
  orders.push({ status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() });
}
await app.close();

let guardError;
try {
  new nest.RollingWindowThrottlerGuard({ throttlers: [] }, new nest.RollingWindowThrottlerStorage());
} catch (error) {
  guardError = { name: error.name, message: error.message };
}
const storage = await new nest.RollingWindowThrottlerStorage().increment('k', 1000, 1, 0, 'default');
const loaded = Object.keys(Module._cache).filter((file) => file.includes('@nestjs/throttler'));
console.log(JSON.stringify({ hiddenFromRequire, hiddenFromImport, orders, guardError, storage, loaded }));
`;

describe('rolling-window-limiter/nestjs without @nestjs/throttler', function () {
  this.timeout(RUN_TIMEOUT_MS + 10_000);

  it('loads, and @RateLimit with RollingWindowGuard limits a Nest application; RollingWindowThrottlerGuard says what to install', async () => {
    const { exitCode, stdout, stderr } = await run(['--import', 'tsx', '--input-type=module', '-e', WITHOUT_THROTTLER]);
    expect(exitCode, stderr).to.equal(0);
    const result = JSON.parse(stdout) as Record<string, unknown>;
    // The package really was out of reach, both ways, and nothing loaded it.
    expect(result).to.include({ hiddenFromRequire: true, hiddenFromImport: true });
    expect(result.loaded).to.deep.equal([]);
    expect(result.orders).to.deep.equal([
      { status: 201, retryAfter: null, body: { ordered: true } },
      { status: 429, retryAfter: '2', body: { error: 'rate_limited', retryAfterSeconds: 2 } },
    ]);
    expect(result.guardError).to.have.property('name', 'UnsupportedError');
    expect((result.guardError as { message: string }).message).to.include('npm install @nestjs/throttler');
    // The storage implements @nestjs/throttler's interface by its shape: it needs only the package's types.
    expect(result.storage).to.deep.include({ totalHits: 1, isBlocked: false });
  });

  it('still builds RollingWindowThrottlerGuard on @nestjs/throttler where it is installed', async () => {
    const { exitCode, stdout, stderr } = await run([
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { ThrottlerGuard } = await import('@nestjs/throttler');
       const nest = await import('./src/integrations/nestjs/index.ts');
       const guard = new nest.RollingWindowThrottlerGuard({ throttlers: [] }, new nest.RollingWindowThrottlerStorage());
       console.log(JSON.stringify({ isThrottlerGuard: guard instanceof ThrottlerGuard }));`,
    ]);
    expect(exitCode, stderr).to.equal(0);
    expect(JSON.parse(stdout)).to.deep.equal({ isThrottlerGuard: true });
  });
});

describe("the README's NestJS example as an ES module under tsx", function () {
  this.timeout(RUN_TIMEOUT_MS + 10_000);

  it('starts (no emitted decorator metadata needed, a second copy of @nestjs/core beside the throttler), answers both orders and exits 0', async () => {
    const { exitCode, stdout, stderr } = await run(['--import', 'tsx', 'examples/nestjs-api.ts']);
    expect(exitCode, stderr).to.equal(0);
    expect(stdout).to.equal(
      'order 1: 201, RateLimit: "OrdersController.create";r=0;t=2, Retry-After: null\n' +
        'order 2: 429, RateLimit: "OrdersController.create";r=0;t=2, Retry-After: 2\n',
    );
  });
});
