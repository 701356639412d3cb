// Bun's RedisClient is told apart by `instanceof Bun.RedisClient`, so nothing
// else ever matches: on Node (no `Bun`), and under a stand-in `Bun` here. The
// real one is checked under Bun by test/runtimes/bun.test.ts.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { isBunRedisClient } from '../../../src/redis/adapters/bun-client.js';

describe('isBunRedisClient', () => {
  const lazyIORedis = (): Redis => new Redis({ lazyConnect: true });

  it('is false for every client where Bun is not the runtime', () => {
    expect('Bun' in globalThis).to.equal(false);
    expect(isBunRedisClient(lazyIORedis())).to.equal(false);
    expect(isBunRedisClient({ send: () => undefined, close: () => undefined })).to.equal(false);
  });

  describe('with a Bun global', () => {
    class RedisClient {
      send(): void {}
    }
    before(() => {
      Object.defineProperty(globalThis, 'Bun', { value: { RedisClient }, configurable: true });
    });
    after(() => {
      Reflect.deleteProperty(globalThis, 'Bun');
    });

    it('is true for an instance of Bun.RedisClient, and false for a look-alike or an ioredis client', () => {
      expect(isBunRedisClient(new RedisClient())).to.equal(true);
      expect(isBunRedisClient({ send: () => undefined })).to.equal(false);
      expect(isBunRedisClient(lazyIORedis())).to.equal(false);
    });
  });
});
