// The middleware's default key over real HTTP, behind a proxy the test plays:
// X-Forwarded-For carries IPv6 addresses of one /56 (one client) and of
// another (another client), and IPv4 as itself and IPv4-mapped. And the
// proxy checks: a warning, once per middleware and with its code, when a
// request carries X-Forwarded-For that Express does not trust, or when
// `trust proxy` is `true`.

import { expect } from 'chai';
import express, { type Express } from 'express';
import sinon from 'sinon';
import { RollingRateLimiter } from '../../../src/index.js';
import { PROXY_WARNING_CODES, rateLimit, type RateLimitOptions } from '../../../src/http/express/express-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

const servers: RunningServer[] = [];

function appWith(trustProxy: unknown, options: Partial<RateLimitOptions<RollingRateLimiter>> = {}): Express {
  const app = express();
  app.set('trust proxy', trustProxy);
  const limiter: HttpRateLimiter = new RollingRateLimiter({ interval: '1m', maxInInterval: 3 });
  app.use(rateLimit({ limiter, ...options }));
  app.get('/', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  // Express's own handler would print each refused request's stack.
  app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).type('text/plain').send(error.message);
  });
  return app;
}

async function start(app: Express): Promise<string> {
  const server = await serve(app);
  servers.push(server);
  return `${server.url}/`;
}

async function statusesFrom(url: string, addresses: readonly string[]): Promise<number[]> {
  const statuses = [];
  for (const address of addresses) statuses.push((await get(url, { 'x-forwarded-for': address })).status);
  return statuses;
}

describe('rateLimit (Express): IPv6 keys and proxy checks', () => {
  let emitWarning: sinon.SinonSpy<Parameters<typeof process.emitWarning>, void>;

  beforeEach(() => {
    emitWarning = sinon.stub(process, 'emitWarning');
  });

  afterEach(async () => {
    sinon.restore();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('counts the addresses of one IPv6 /56 as one client, and another /56 apart', async () => {
    const url = await start(appWith(1));
    const oneSlash56 = ['2001:db8:aa:bb01::1', '2001:db8:aa:bb02::2', '2001:db8:aa:bbff:1:2:3:4', '2001:db8:aa:bb10::9'];
    expect(await statusesFrom(url, oneSlash56), oneSlash56.join(', ')).to.deep.equal([200, 200, 200, 429]);
    expect(await statusesFrom(url, ['2001:db8:aa:cc00::1']), 'another /56').to.deep.equal([200]);
    expect(emitWarning.called, 'trust proxy 1 is sound').to.equal(false);
  });

  it('counts an IPv4 client and its IPv4-mapped IPv6 address as one', async () => {
    const url = await start(appWith(1));
    const addresses = ['203.0.113.7', '::ffff:203.0.113.7', '203.0.113.7', '::ffff:203.0.113.7'];
    expect(await statusesFrom(url, addresses)).to.deep.equal([200, 200, 200, 429]);
  });

  it('reduces to the prefix given by ipv6Subnet, or keys whole addresses with false', async () => {
    const by64 = await start(appWith(1, { ipv6Subnet: 64 }));
    expect(
      await statusesFrom(by64, ['2001:db8:aa:bb01::1', '2001:db8:aa:bb01::2', '2001:db8:aa:bb02::1', '2001:db8:aa:bb01::3', '2001:db8:aa:bb01::4']),
    ).to.deep.equal([200, 200, 200, 200, 429]);
    const whole = await start(appWith(1, { ipv6Subnet: false }));
    expect(await statusesFrom(whole, ['2001:db8::1', '2001:db8::2', '2001:db8::3', '2001:db8::4'])).to.deep.equal([200, 200, 200, 200]);
    expect(await statusesFrom(whole, ['2001:db8:0::1', '2001:DB8::1', '2001:db8::0:1'])).to.deep.equal([200, 200, 429]);
  });

  it('drops a port a proxy wrote with the address, IPv4 and bracketed IPv6 alike', async () => {
    const url = await start(appWith(1));
    const v4 = Array.from({ length: 30 }, (_, i) => `203.0.113.7:${40_000 + i}`);
    const v4Statuses = await statusesFrom(url, v4);
    expect(
      v4Statuses.filter((status) => status === 200),
      'admitted of 30 connections of one IPv4 client',
    ).to.have.length(3);
    expect(await statusesFrom(url, ['203.0.113.7']), 'the same client without a port').to.deep.equal([429]);
    const v6 = ['[2001:db8:aa:bb01::1]:443', '[2001:db8:aa:bb02::2]:40001', '2001:db8:aa:bb03::3', '[2001:db8:aa:bb04::4]'];
    expect(await statusesFrom(url, v6), 'one /56, with and without ports').to.deep.equal([200, 200, 200, 429]);
    expect(emitWarning.called).to.equal(false);
  });

  it('refuses a req.ip that is not an IP address (a 500), warning once with its code', async () => {
    const url = await start(appWith(1));
    const odd = ['client-7', 'unknown', '203.0.113.7:port', '[203.0.113.7]:80'];
    expect(await statusesFrom(url, odd)).to.deep.equal([500, 500, 500, 500]);
    expect(emitWarning.callCount).to.equal(1);
    const [message, options] = emitWarning.firstCall.args as [string, { code: string }];
    expect(options).to.deep.include({ code: PROXY_WARNING_CODES.invalidIp });
    expect(options.code).to.equal('RATE_LIMITER_INVALID_IP');
    expect(message).to.include('"client-7"').and.include('refused');
    const quiet = await start(appWith(1, { validate: false }));
    expect(await statusesFrom(quiet, ['client-7']), 'refused with validate: false too').to.deep.equal([500]);
    expect(emitWarning.callCount, 'without the warning').to.equal(1);
  });

  it('warns once when X-Forwarded-For arrives and Express trusts no proxy', async () => {
    const url = await start(appWith(false));
    await statusesFrom(url, ['2001:db8::1', '198.51.100.1']);
    expect(emitWarning.callCount).to.equal(1);
    const [message, options] = emitWarning.firstCall.args as [string, { code: string; type: string }];
    expect(options).to.deep.equal({ type: 'RateLimiterWarning', code: PROXY_WARNING_CODES.forwardedForUntrusted });
    expect(options.code).to.equal('RATE_LIMITER_XFF_UNTRUSTED');
    expect(message).to.match(/trust proxy/);
    await get(url); // a request without the header says nothing either
    expect(emitWarning.callCount).to.equal(1);
  });

  it('warns once when `trust proxy` is true, since clients then choose their IP', async () => {
    const url = await start(appWith(true));
    // Every forged address is trusted: each is a new client, which is what the warning is about.
    expect(await statusesFrom(url, ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'])).to.deep.equal([200, 200, 200, 200]);
    expect(emitWarning.callCount).to.equal(1);
    expect(emitWarning.firstCall.args[1]).to.deep.include({ code: 'RATE_LIMITER_TRUST_PROXY_TRUE' });
  });

  it('checks nothing with validate: false, or with a key function of its own', async () => {
    const quiet = await start(appWith(false, { validate: false }));
    await statusesFrom(quiet, ['198.51.100.1']);
    const ownKey = await start(appWith(true, { key: (req) => req.get('x-api-key') ?? 'anonymous' }));
    await statusesFrom(ownKey, ['198.51.100.1']);
    expect(emitWarning.called).to.equal(false);
  });
});
