import { expect } from 'chai';
import sinon from 'sinon';
import type { NodeRedisLikeClient, RedisCommand } from '../../../src/redis/adapters/client-types.js';
import { NodeRedisAdapter } from '../../../src/redis/adapters/node-redis-adapter.js';

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
