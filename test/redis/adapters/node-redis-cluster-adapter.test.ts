import { expect } from 'chai';
import sinon from 'sinon';
import { maxRetries, redirectionOf, retryPauseMs } from '../../../src/redis/adapters/cluster-redirection.js';
import type { NodeRedisLikeCluster } from '../../../src/redis/adapters/client-types.js';
import { keySlot } from '../../../src/redis/adapters/key-slot.js';
import { NodeRedisClusterAdapter } from '../../../src/redis/adapters/node-redis-cluster-adapter.js';
import { keySlot as referenceKeySlot } from '../../support/redis-cluster.js';

const KEY = 'ns:{42}';

/** A node connection that records what it was sent and answers from `answers` (an Error rejects). */
function fakeNode(name: string, answer: (args: string[]) => unknown, log: string[]): { sendCommand(args: string[]): Promise<unknown> } {
  return {
    sendCommand: (args) => {
      log.push(`${name}: ${args.join(' ')}`);
      const reply = answer(args);
      return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
    },
  };
}

/** A node-redis cluster whose MULTI and sendCommand answer as given, with two nodes `a:1` (the map's owner) and `b:2`. */
function fakeCluster(options: {
  multi: () => Promise<unknown>;
  script?: () => Promise<unknown>;
  a?: (args: string[]) => unknown;
  b?: (args: string[]) => unknown;
}): { client: NodeRedisLikeCluster; log: string[] } {
  const log: string[] = [];
  const nodes = new Map([
    ['a:1', fakeNode('a', options.a ?? (() => 'OK'), log)],
    ['b:2', fakeNode('b', options.b ?? (() => 'OK'), log)],
  ]);
  const slots: { master: { address: string } }[] = [];
  slots[keySlot(KEY)] = { master: { address: 'a:1' } };
  const client = {
    isOpen: true,
    masters: [],
    multi: () => {
      const multi = { addCommand: () => multi, exec: options.multi };
      return multi;
    },
    sendCommand: (routing: string | undefined, _readonly: boolean | undefined, args: string[]) => {
      log.push(`cluster: ${args.join(' ')}${routing === args[1] || routing === KEY ? '' : ` (routed by ${routing})`}`);
      return args[0] === 'EXISTS' ? Promise.resolve(1) : (options.script ?? (() => Promise.resolve('script')))();
    },
    nodeByAddress: new Map([...nodes.keys()].map((address) => [address, { address }])),
    slots,
    nodeClient: (node: { address: string }) => nodes.get(node.address),
  };
  return { client, log };
}

const errorReply = (message: string): Error => new Error(message);

describe('the node-redis cluster adapter (client faked)', () => {
  // A sandbox of this file's own: the default sandbox may still hold another file's fake timers.
  const sandbox = sinon.createSandbox();
  afterEach(() => sandbox.restore());

  it('reads redirections from Redis’s answers, and nothing else', () => {
    expect(redirectionOf(errorReply('MOVED 3999 127.0.0.1:6381'))).to.deep.equal({ kind: 'moved', address: '127.0.0.1:6381' });
    expect(redirectionOf(errorReply('ASK 3999 [::1]:6381'))).to.deep.equal({ kind: 'ask', address: '[::1]:6381' });
    for (const message of ['TRYAGAIN Multiple keys request during rehashing of slot', 'EXECABORT Transaction discarded because of previous errors.']) {
      expect(redirectionOf(errorReply(message)), message).to.deep.equal({ kind: 'retry' });
    }
    expect(redirectionOf(errorReply('CLUSTERDOWN The cluster is down'))).to.deep.equal({ kind: 'down' });
    for (const other of [errorReply('WRONGTYPE Operation against a key'), errorReply('NOSCRIPT No matching script'), 'MOVED 1 a:1', undefined]) {
      expect(redirectionOf(other)).to.equal(undefined);
    }
  });

  it('pauses not at all before following MOVED or ASK, then 5 ms doubling up to 200 ms; 100 ms each, for 2 s, while the cluster is down', () => {
    const moved = { kind: 'moved', address: 'a:1' } as const;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((retry) => retryPauseMs(retry, moved))).to.deep.equal([0, 10, 20, 40, 80, 160, 200, 200]);
    expect(retryPauseMs(1, { kind: 'retry' })).to.equal(5);
    expect(maxRetries(moved)).to.equal(8);
    expect([1, 20].map((retry) => retryPauseMs(retry, { kind: 'down' }))).to.deep.equal([100, 100]);
    expect(maxRetries({ kind: 'down' })).to.equal(20);
  });

  it('computes the same slot as the test harness (and Redis), hash tags included', () => {
    for (const key of ['', 'foo', '{user1000}.following', 'a{b}c', '{}x', 'x{}{y}', '日本{東京}', '😀', 'ns:{%7B42%7D}', '123456789']) {
      expect(keySlot(key), key).to.equal(referenceKeySlot(key));
    }
    expect(keySlot('123456789')).to.equal(0x31c3 % 16384);
  });

  it('after MOVED, refreshes the client’s slot map and sends the MULTI to the node named, in one piece', async () => {
    const { client, log } = fakeCluster({ multi: () => Promise.reject(errorReply('MOVED 1 b:2')), b: (args) => (args[0] === 'EXEC' ? [1, 2] : 'QUEUED') });
    expect(
      await new NodeRedisClusterAdapter(client).transaction([
        ['zadd', KEY, 1, 'm'],
        ['pexpire', KEY, 10],
      ]),
    ).to.deep.equal([1, 2]);
    expect(log).to.deep.equal([`cluster: EXISTS ${KEY}`, 'b: MULTI', `b: zadd ${KEY} 1 m`, `b: pexpire ${KEY} 10`, 'b: EXEC']);
  });

  it('after ASK, sends ASKING and the MULTI together to the node named, without refreshing the map', async () => {
    const { client, log } = fakeCluster({ multi: () => Promise.reject(errorReply('ASK 1 b:2')), b: (args) => (args[0] === 'EXEC' ? ['ok'] : 'OK') });
    expect(await new NodeRedisClusterAdapter(client).transaction([['zcard', KEY]])).to.deep.equal(['ok']);
    expect(log).to.deep.equal(['b: ASKING', 'b: MULTI', `b: zcard ${KEY}`, 'b: EXEC']);
  });

  it('after EXECABORT (all node-redis 4 shows), asks the map’s owner itself and follows the ASK it then sees', async () => {
    const { client, log } = fakeCluster({
      multi: () => Promise.reject(errorReply('EXECABORT Transaction discarded because of previous errors.')),
      a: (args) => (args[0] === 'MULTI' ? 'OK' : args[0] === 'EXEC' ? errorReply('EXECABORT Transaction discarded') : errorReply('ASK 1 b:2')),
      b: (args) => (args[0] === 'EXEC' ? [7] : 'OK'),
    });
    expect(await new NodeRedisClusterAdapter(client).transaction([['zcard', KEY]])).to.deep.equal([7]);
    expect(log).to.deep.equal([`cluster: EXISTS ${KEY}`, 'a: MULTI', `a: zcard ${KEY}`, 'a: EXEC', 'b: ASKING', 'b: MULTI', `b: zcard ${KEY}`, 'b: EXEC']);
  });

  it('sends a script refused with TRYAGAIN again after a pause, until it runs', async () => {
    let refusals = 2;
    const { client, log } = fakeCluster({
      multi: () => Promise.resolve([]),
      script: () => Promise.reject(errorReply('TRYAGAIN Multiple keys request during rehashing of slot')),
      a: (args) => (args[0] === 'EVALSHA' && refusals-- > 0 ? errorReply('TRYAGAIN Multiple keys request') : 5),
    });
    expect(await new NodeRedisClusterAdapter(client).evalsha('abc', [KEY, 'other:{42}'], [1, 'x'])).to.equal(5);
    expect(log.filter((line) => line.includes('EVALSHA'))).to.deep.equal([
      `cluster: EVALSHA abc 2 ${KEY} other:{42} 1 x`,
      `a: EVALSHA abc 2 ${KEY} other:{42} 1 x`,
      `a: EVALSHA abc 2 ${KEY} other:{42} 1 x`,
      `a: EVALSHA abc 2 ${KEY} other:{42} 1 x`,
    ]);
  });

  it('makes the client re-read its slot map through another master when a call stalls, every 300 ms until none does', async () => {
    const clock = sandbox.useFakeTimers({ toFake: ['performance', 'setInterval', 'clearInterval'] });
    let answer: (replies: unknown) => void = () => {};
    const answered = new Promise((resolve) => (answer = resolve));
    const { client, log } = fakeCluster({ multi: () => answered });
    // Every other slot is served by b:2, so a probe routed by any other key goes there.
    for (let slot = 0; slot < 16384; slot++) (client as unknown as { slots: unknown[] }).slots[slot] ??= { master: { address: 'b:2' } };
    const adapter = new NodeRedisClusterAdapter(client);
    const calls = [adapter.transaction([['zcard', KEY]])];
    clock.tick(1_000);
    calls.push(adapter.transaction([['zcard', KEY]]));
    expect(log, 'not stalled yet at 1 s').to.deep.equal([]);
    clock.tick(1);
    calls.push(adapter.transaction([['zcard', KEY]]));
    expect(log).to.have.length(1);
    expect(log[0]).to.match(new RegExp(`^cluster: EXISTS ${KEY.replace(/[{}]/g, '\\$&')} \\(routed by \\d+\\)$`));
    clock.tick(299);
    calls.push(adapter.transaction([['zcard', KEY]]));
    expect(log, 'at most one check per 300 ms').to.have.length(1);
    clock.tick(1);
    expect(log, 'checked again without a new call').to.have.length(2);
    answer([0]);
    await Promise.all(calls);
    clock.tick(300);
    clock.tick(3_000);
    expect(log, 'no check once no call stalls').to.have.length(2);
    expect(clock.countTimers(), 'the watchdog stopped').to.equal(0);
  });

  it('throws any other error at once, and the last refusal after 8 retries (20 for CLUSTERDOWN, 2 s)', async () => {
    const wrongType = errorReply('WRONGTYPE Operation against a key holding the wrong kind of value');
    const failing = fakeCluster({ multi: () => Promise.reject(wrongType) });
    expect(await new NodeRedisClusterAdapter(failing.client).transaction([['zcard', KEY]]).catch((error: unknown) => error)).to.equal(wrongType);
    expect(failing.log).to.deep.equal([]);

    const clock = sandbox.useFakeTimers({ toFake: ['setTimeout'] });
    const down = fakeCluster({
      multi: () => Promise.reject(errorReply('CLUSTERDOWN The cluster is down')),
      a: () => errorReply('CLUSTERDOWN The cluster is down'),
    });
    const outcome = new NodeRedisClusterAdapter(down.client).transaction([['zcard', KEY]]).catch((error: unknown) => error);
    await clock.tickAsync(2_000);
    expect(String(await outcome)).to.equal('Error: CLUSTERDOWN The cluster is down');
    expect(down.log.filter((line) => line === 'a: MULTI')).to.have.length(20);

    const trying = fakeCluster({ multi: () => Promise.reject(errorReply('TRYAGAIN Multiple keys')), a: () => errorReply('TRYAGAIN Multiple keys') });
    const refused = new NodeRedisClusterAdapter(trying.client).transaction([['zcard', KEY]]).catch((error: unknown) => error);
    await clock.tickAsync(2_000);
    expect(String(await refused)).to.equal('Error: TRYAGAIN Multiple keys');
    expect(trying.log.filter((line) => line === 'a: MULTI')).to.have.length(8);
  });
});
