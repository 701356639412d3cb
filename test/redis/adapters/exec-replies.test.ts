// Every adapter reads EXEC's replies the same way (exec-replies.ts): the
// replies, or the first error among them, or an error saying what EXEC
// answered instead of a list.

import { expect } from 'chai';
import sinon from 'sinon';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import { CallbackRedisAdapter } from '../../../src/redis/adapters/callback-adapter.js';
import type { CallbackRedisLikeClient, IORedisLikeClient } from '../../../src/redis/adapters/client-types.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';
import { NodeRedisAdapter } from '../../../src/redis/adapters/node-redis-adapter.js';

const wrongType = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');

/** An adapter of each client kind whose EXEC answers `replies`, each in its own client's shape. */
function adaptersAnswering(replies: unknown[] | null): RedisAdapter[] {
  const ioredis = {
    isCluster: false,
    pipeline: () => undefined,
    evalsha: sinon.stub(),
    eval: sinon.stub(),
    multi: () => ({ exec: () => Promise.resolve(replies?.map((reply) => (reply instanceof Error ? [reply, null] : [null, reply])) ?? null) }),
  } as unknown as IORedisLikeClient;
  const callback: CallbackRedisLikeClient = { connected: true, zadd: () => undefined, multi: () => ({ exec: (done) => done(null, replies) }) };
  const multi = { addCommand: () => multi, exec: () => Promise.resolve(replies) };
  const nodeRedis = { isOpen: true, multi: () => multi, sendCommand: sinon.stub() };
  return [new IORedisAdapter(ioredis), new CallbackRedisAdapter(callback), new NodeRedisAdapter(nodeRedis)];
}

describe('EXEC’s replies, read alike by every adapter (clients faked)', () => {
  it('resolves with the replies, one per command', async () => {
    for (const adapter of adaptersAnswering([1, 'OK', null])) {
      expect(await adapter.transaction([['zcard', 'k']]), adapter.kind).to.deep.equal([1, 'OK', null]);
    }
  });

  it('rejects with the first error reply', async () => {
    for (const adapter of adaptersAnswering([1, wrongType, new Error('later')])) {
      expect(await adapter.transaction([['zcard', 'k']]).catch((error: unknown) => error), adapter.kind).to.equal(wrongType);
    }
  });

  it('rejects, saying so, when Redis aborted the transaction (EXEC answered null)', async () => {
    for (const adapter of adaptersAnswering(null)) {
      const error = await adapter.transaction([['zcard', 'k']]).catch((caught: unknown) => caught);
      expect(error, adapter.kind).to.be.instanceOf(Error).with.property('message', 'MULTI was aborted by Redis (EXEC returned null)');
    }
  });
});
