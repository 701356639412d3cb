// The Upstash-REST-compatible test endpoint (upstash-rest-endpoint.ts), by raw
// HTTP: what @upstash/redis sends, and what it gets back: one command, a
// pipeline, a transaction; base64 strings but "OK" when asked for, text
// otherwise; Redis's errors with 400 or in place; a wrong token with 401; and
// what it refuses (connection commands, other methods, oversized bodies).

import { expect } from 'chai';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from './upstash-rest-endpoint.js';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('the Upstash-REST-compatible test endpoint', function () {
  this.timeout(20_000);
  let server: RedisServer;
  let endpoint: UpstashRestEndpoint;
  before(async () => {
    server = await startRedisServer();
    endpoint = await startUpstashRestEndpoint({ redisUrl: server.url, refuse: ['config'], maxBodyBytes: 1024 });
  });
  after(async () => {
    await endpoint?.close();
    await server?.stop();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> => {
    const response = await fetch(endpoint.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${endpoint.token}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  };
  const base64 = { 'upstash-encoding': 'base64' };

  it('listens on 127.0.0.1 only', () => {
    expect(new URL(endpoint.url).hostname).to.equal('127.0.0.1');
  });

  it('runs one command: strings base64-encoded but "OK" when asked, integers as numbers, nil as null', async () => {
    expect(await post('/', ['set', 'k', 'välue'], base64)).to.deep.equal({ status: 200, json: { result: 'OK' } });
    expect(await post('/', ['get', 'k'], base64)).to.deep.equal({ status: 200, json: { result: b64('välue') } });
    expect(await post('/', ['get', 'k'])).to.deep.equal({ status: 200, json: { result: 'välue' } });
    expect(await post('/', ['incrby', 'n', 5], base64)).to.deep.equal({ status: 200, json: { result: 5 } });
    expect(await post('/', ['get', 'missing'], base64)).to.deep.equal({ status: 200, json: { result: null } });
    expect(await post('/', ['eval', "return {1, 'a', {2, 'OK'}}", 0], base64)).to.deep.equal({ status: 200, json: { result: [1, b64('a'), [2, 'OK']] } });
  });

  it('answers a failed command with 400 and Redis’s error', async () => {
    expect(await post('/', ['evalsha', 'ffffffffffffffffffffffffffffffffffffffff', 0])).to.deep.equal({
      status: 400,
      json: { error: 'NOSCRIPT No matching script. Please use EVAL.' },
    });
    expect(await post('/', ['config', 'get', 'maxmemory'])).to.deep.equal({ status: 400, json: { error: "ERR Command is not available: 'CONFIG'" } });
    expect((await post('/', ['subscribe', 'channel'])).status).to.equal(400);
  });

  it('runs a pipeline, each command’s result or error in its place', async () => {
    const { status, json } = await post(
      '/pipeline',
      [
        ['set', 'p', 'x'],
        ['incr', 'p'],
        ['config', 'get', 'x'],
        ['get', 'p'],
      ],
      base64,
    );
    expect(status).to.equal(200);
    expect(json).to.deep.equal([
      { result: 'OK' },
      { error: 'ERR value is not an integer or out of range' },
      { error: "ERR Command is not available: 'CONFIG'" },
      { result: b64('x') },
    ]);
  });

  it('runs a transaction between MULTI and EXEC, and answers one Redis discards with 400', async () => {
    expect(
      await post('/multi-exec', [
        ['set', 't', 'x'],
        ['incr', 't'],
        ['get', 't'],
      ]),
    ).to.deep.equal({ status: 200, json: [{ result: 'OK' }, { error: 'ERR value is not an integer or out of range' }, { result: 'x' }] });
    const discarded = await post('/multi-exec', [['set', 't', 'y'], ['no-such-command']]);
    expect(discarded.status).to.equal(400);
    expect((discarded.json as { error: string }).error).to.match(/^EXECABORT .*unknown command/);
    expect(await post('/', ['get', 't'])).to.deep.equal({ status: 200, json: { result: 'x' } });
  });

  it('refuses a wrong or missing token (401), another method (405), another path (404), a body too large (413) or not JSON (400)', async () => {
    expect(await post('/', ['ping'], { authorization: 'Bearer wrong' })).to.deep.equal({ status: 401, json: { error: 'Unauthorized' } });
    expect((await fetch(endpoint.url, { method: 'POST', body: '["ping"]' })).status).to.equal(401);
    expect((await fetch(endpoint.url, { headers: { authorization: `Bearer ${endpoint.token}` } })).status).to.equal(405);
    expect((await post('/nowhere', ['ping'])).status).to.equal(404);
    expect((await post('/', ['set', 'big', 'x'.repeat(2048)])).status).to.equal(413);
    expect((await post('/', 'not json')).status).to.equal(400);
  });

  it('counts requests and the commands sent on to Redis', async () => {
    endpoint.resetStats();
    await post('/', ['ping']);
    await post('/pipeline', [['ping'], ['ping']]);
    expect(endpoint.stats).to.deep.include({ requests: 2, commands: 3 });
    expect(endpoint.stats.byPath).to.deep.equal({ '/': 1, '/pipeline': 1 });
  });

  it('closes its connections and stops listening, and may be closed twice', async () => {
    const other = await startUpstashRestEndpoint({ redisUrl: server.url });
    await fetch(other.url, { method: 'POST', headers: { authorization: `Bearer ${other.token}` }, body: '["ping"]' });
    await Promise.all([other.close(), other.close()]);
    const refused = await fetch(other.url, { method: 'POST', body: '["ping"]' }).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).to.equal('refused');
  });
});
