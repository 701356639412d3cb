// @fastify/rate-limit's `groupId` with rollingWindowStore: routes that share a
// `groupId` share one count per client, as the plugin's README says ("a string
// to group multiple routes together"); routes with their own `config.rateLimit`
// and no group, or in another group, keep counts of their own. The plugin hands
// each such route a store of its own (`child`), and its key (the client's, with
// the group appended), so the group has to name the store's keys. The README's
// `/otp` example, in memory and on real Redis (ioredis, node-redis), through
// `fastify.inject`.

import { expect } from 'chai';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend, type StoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('fastify-groups');

/**
 * The plugin's README example of grouped routes, as it stands there (`/otp/send` and `/otp/resend`: 3 a minute,
 * `groupId: "OTP"`), beside a route of another group and one with limits of its own but no group.
 */
async function otpApp(backend: StoreBackend): Promise<FastifyInstance> {
  const fastify = Fastify();
  await fastify.register(fastifyRateLimit, {
    max: 100,
    timeWindow: '1 minute',
    store: rollingWindowStore({ ...backend.clientOption(), namespace: namespaces.next(backend.name) }),
  });
  fastify.get(
    '/otp/send',
    {
      config: {
        rateLimit: {
          max: 3,
          timeWindow: '1 minute',
          groupId: 'OTP',
        },
      },
    },
    (_request, reply) => {
      reply.send({ hello: 'from ... grouped rate limit' });
    },
  );
  fastify.get(
    '/otp/resend',
    {
      config: {
        rateLimit: {
          max: 3,
          timeWindow: '1 minute',
          groupId: 'OTP',
        },
      },
    },
    (_request, reply) => {
      reply.send({ hello: 'from ... grouped rate limit' });
    },
  );
  fastify.get('/login', { config: { rateLimit: { max: 3, timeWindow: '1 minute', groupId: 'LOGIN' } } }, async () => 'ok');
  fastify.get('/verify', { config: { rateLimit: { max: 3, timeWindow: '1 minute' } } }, async () => 'ok');
  await fastify.ready();
  return fastify;
}

forEachStoreBackend('rollingWindowStore, routes grouped by groupId', (backend) => {
  let fastify: FastifyInstance | undefined;
  afterEach(async () => {
    await fastify?.close();
    fastify = undefined;
  });

  const status = async (url: string, remoteAddress = '203.0.113.7'): Promise<number> => (await fastify!.inject({ url, remoteAddress })).statusCode;

  it("counts the README's /otp routes together: 3 a minute for both, whichever a client calls", async () => {
    fastify = await otpApp(backend);
    expect(await status('/otp/send')).to.equal(200);
    expect(await status('/otp/resend')).to.equal(200);
    expect(await status('/otp/send')).to.equal(200);
    expect(await status('/otp/resend'), "the group's 4th request in the minute").to.equal(429);
    expect(await status('/otp/send')).to.equal(429);
    expect(await status('/otp/send', '198.51.100.1'), 'another client has a count of its own').to.equal(200);
  });

  it('reports one count across the group in the headers', async () => {
    fastify = await otpApp(backend);
    const remaining = async (url: string): Promise<unknown> => (await fastify!.inject({ url })).headers['x-ratelimit-remaining'];
    expect([await remaining('/otp/send'), await remaining('/otp/resend'), await remaining('/otp/send')]).to.deep.equal(['2', '1', '0']);
  });

  it('keeps another group, and a route with limits of its own but no group, apart', async () => {
    fastify = await otpApp(backend);
    for (let i = 0; i < 3; i += 1) expect(await status(i % 2 === 0 ? '/otp/send' : '/otp/resend')).to.equal(200);
    expect(await status('/otp/resend')).to.equal(429);
    for (const url of ['/login', '/verify']) {
      for (let i = 0; i < 3; i += 1) expect(await status(url), `${url} #${i + 1}`).to.equal(200);
      expect(await status(url), `${url} #4`).to.equal(429);
    }
  });
});
