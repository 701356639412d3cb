import { expect } from 'chai';
import { KeyBuilder, actionRecordsKey, escapeIdentifier, recordWeightsKey } from '../../src/core/identity.js';
import { keySlot } from '../../src/redis/adapters/key-slot.js';
import { SeededRandom } from '../support/random.js';

/** The Redis Cluster hash tag of a key, as Redis computes it. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

function randomString(random: SeededRandom): string {
  const alphabet = ['a', 'b', ':', '{', '}', '%', '7', 'B', 'D', '3', 'A', ' ', '\u00e9', '\uD83D', '\uDE00', '\uD800', '\uDFFF', '\0', 'u'];
  let text = '';
  const length = random.int(0, 8);
  for (let i = 0; i < length; i += 1) text += random.pick(alphabet);
  return text;
}

describe('keys', () => {
  it('builds namespace:{id}', () => {
    expect(new KeyBuilder('push').keyFor('42')).to.equal('push:{42}');
  });

  it('leaves a plain part untouched (no work in the common case)', () => {
    const id = 'user-123_abc.DEF';
    expect(escapeIdentifier(id)).to.equal(id);
  });

  it('escapes delimiters and lone surrogates but keeps surrogate pairs', () => {
    expect(escapeIdentifier('a:b{c}d%')).to.equal('a%3Ab%7Bc%7Dd%25');
    expect(escapeIdentifier('😀')).to.equal('😀');
    expect(escapeIdentifier('x\uD800y')).to.equal('x%uD800y');
    expect(escapeIdentifier('\uDFFF')).to.equal('%uDFFF');
  });

  it('is injective and puts exactly the id in the hash tag, on 20,000 random (namespace, id) pairs', () => {
    const random = new SeededRandom(20261121);
    const seen = new Map<string, string>();
    for (let i = 0; i < 20_000; i += 1) {
      const namespace = randomString(random);
      const id = randomString(random) || 'x';
      const key = new KeyBuilder(namespace).keyFor(id);
      const pair = JSON.stringify([namespace, id]);
      const previous = seen.get(key);
      if (previous !== undefined) expect(previous, `key ${key}`).to.equal(pair);
      seen.set(key, pair);
      expect(hashTag(key)).to.equal(escapeIdentifier(id));
      // UTF-8 cannot carry a lone surrogate: keys must be well formed so that no two collapse into U+FFFD.
      expect(Buffer.from(key, 'utf8').toString('utf8'), key).to.equal(key);
    }
  });

  it('gives every namespace of one id the same hash tag (one Cluster slot)', () => {
    const id = 'user:{42}';
    expect(hashTag(new KeyBuilder('per-second').keyFor(id))).to.equal(hashTag(new KeyBuilder('per:{day}').keyFor(id)));
  });

  // A script that runs on part of an id's keys could not decide it exactly: on a Redis Cluster every key the library
  // writes for an id must live in the id's hash slot, whatever slot moves. A new kind of key joins this list.
  it("keeps every kind of key an id has (its records, action records, weights) in the id's one Cluster slot", () => {
    const random = new SeededRandom(20261129);
    for (let i = 0; i < 2_000; i += 1) {
      const id = randomString(random) || 'x';
      const key = new KeyBuilder(randomString(random)).keyFor(id);
      const slot = keySlot(`{${escapeIdentifier(id)}}`);
      for (const kind of [key, actionRecordsKey(key), recordWeightsKey(key)]) expect(keySlot(kind), kind).to.equal(slot);
    }
  });

  it('keeps a 10 kB id whole', () => {
    const id = 'é'.repeat(10_000);
    expect(new KeyBuilder('n').keyFor(id)).to.equal(`n:{${id}}`);
  });
});
