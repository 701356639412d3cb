import { expect } from 'chai';
import sinon from 'sinon';
import { StoreError } from '../../../src/index.js';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import type { NodeRedisLikeClient, NodeRedisLikeSentinel, RedisCommand } from '../../../src/redis/adapters/client-types.js';
import { NodeRedisAdapter } from '../../../src/redis/adapters/node-redis-adapter.js';
import { NodeRedisClusterAdapter } from '../../../src/redis/adapters/node-redis-cluster-adapter.js';

/** A node-redis client whose MULTI records what it was given and answers `replies`. */
function fakeClient(replies: unknown): { client: NodeRedisLikeClient; added: string[][] } {
  const added: string[][] = [];
  const multi = { addCommand: (args: string[]) => (added.push(args), multi), exec: sinon.stub().resolves(replies) };
  const client = { isOpen: true, multi: () => multi, sendCommand: sinon.stub().rejects(new Error('not expected')) };
  return { client, added };
}

describe('the node-redis adapter (client faked)', () => {
  it('sends a command of strings as it is, and spells out the numbers of any other', async () => {
    const { client, added } = fakeClient([1, 2]);
    const strings: RedisCommand = ['zadd', 'k', '17', 'm'];
    const mixed: RedisCommand = ['zrevrange', 'k', 0, -1, 'withscores'];
    expect(await new NodeRedisAdapter(client).transaction([strings, mixed])).to.deep.equal([1, 2]);
    expect(added[0], 'no copy of a command that is all strings').to.equal(strings);
    expect(added[1]).to.deep.equal(['zrevrange', 'k', '0', '-1', 'withscores']);
  });

  it('rejects with the first error EXEC answered in place, or when EXEC answers no list', async () => {
    const wrongType = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    const inPlace = fakeClient([1, wrongType, new Error('later')]).client;
    expect(await new NodeRedisAdapter(inPlace).transaction([['get', 'k']]).catch((error: unknown) => error)).to.equal(wrongType);
    const notAList = fakeClient('OK').client;
    const error = await new NodeRedisAdapter(notAList).transaction([['get', 'k']]).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(Error).with.property('message', 'MULTI answered `"OK"` (string) instead of a list of replies');
  });
});

describe('the node-redis adapter of a Sentinel client (client faked)', () => {
  it('sends every call to the primary: the read-only flag `false` before each command', async () => {
    const added: unknown[][] = [];
    const multi = { addCommand: (...args: unknown[]) => (added.push(args), multi), exec: sinon.stub().resolves(['OK']) };
    const sendCommand = sinon.stub().resolves('sent');
    const client: NodeRedisLikeSentinel = { isOpen: true, getSentinelNode: () => undefined, getMasterNode: () => undefined, multi: () => multi, sendCommand };
    const adapter = new NodeRedisAdapter(client, true);
    expect(adapter.kind).to.equal('node-redis sentinel');
    expect(await adapter.transaction([['pexpire', 'k', 10]])).to.deep.equal(['OK']);
    expect(added).to.deep.equal([[false, ['pexpire', 'k', '10']]]);
    expect(await adapter.evalsha('abc', ['k'], [1])).to.equal('sent');
    expect(await adapter.eval('return 1', [], [])).to.equal('sent');
    expect(sendCommand.args).to.deep.equal([
      [false, ['EVALSHA', 'abc', '1', 'k', '1']],
      [false, ['EVAL', 'return 1', '0']],
    ]);
  });
});

describe('the node-redis adapters on a client that is not open (client faked)', () => {
  const unexpected = (): never => expect.fail('nothing may be sent on a client that is not open');
  const closed = { isOpen: false, multi: unexpected, sendCommand: unexpected };
  const adapters: RedisAdapter[] = [
    new NodeRedisAdapter(closed),
    new NodeRedisAdapter({ ...closed, getSentinelNode: unexpected, getMasterNode: unexpected }, true),
    new NodeRedisClusterAdapter({ ...closed, masters: [] }),
  ];
  for (const adapter of adapters) {
    it(`rejects every call of the ${adapter.kind} adapter, sending nothing, and says to connect first`, async () => {
      const calls = [adapter.transaction([['zcard', 'k']]), adapter.evalsha('abc', ['k'], []), adapter.eval('return 1', ['k'], [])];
      for (const outcome of await Promise.allSettled(calls)) {
        const reason = (outcome as PromiseRejectedResult).reason as unknown;
        expect(reason).to.be.instanceOf(StoreError);
        expect((reason as Error).message)
          .to.include(`The ${adapter.kind} client is not connected (isOpen is false)`)
          .and.include('`await client.connect()`');
      }
    });
  }
});
