import { expect } from 'chai';
import sinon from 'sinon';
import type { IORedisLikeClient } from '../../../src/redis/adapters/client-types.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';

describe('IORedisAdapter (client faked)', () => {
  it('sends a script call of any length with text arguments only, which ioredis writes as one string', async () => {
    const evalsha = sinon.stub().resolves([1]);
    const adapter = new IORedisAdapter({ isCluster: false, evalsha, eval: sinon.stub() } as unknown as IORedisLikeClient);
    // A batch's call: thousands of arguments.
    const keys = Array.from({ length: 2_000 }, (_, i) => `limit:{user${i}}`);
    const args = Array.from({ length: 6_000 }, (_, i) => (i % 2 === 0 ? i : `(${1_764_000_000_000_000 + i}`));
    await adapter.evalsha('a'.repeat(40), keys, args);
    const [sha1, numkeys, keysAndArgs] = evalsha.firstCall.args as [unknown, unknown, unknown[]];
    expect(sha1).to.equal('a'.repeat(40));
    expect(numkeys).to.equal(2_000);
    expect(keysAndArgs).to.deep.equal([...keys, ...args]);
    expect(keysAndArgs.every((value) => typeof value === 'string' || typeof value === 'number')).to.equal(true);
  });
});
