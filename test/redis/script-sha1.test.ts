// The SHA1s that EVALSHA names the scripts by, without `node:crypto` where the
// runtime has none: sha1.ts (plain JavaScript) gives what Node's createHash
// gives, for the test vectors of FIPS 180-4, at every padding boundary, for
// any string, and for every script; and defineScript uses it, once, at the
// first read, when `node:crypto` is missing. (That Redis loads each script
// under its SHA1: store-scripts.test.ts, decide/decide-script.test.ts,
// http/stores/hit-log/hit-log-script.test.ts.)

import { expect } from 'chai';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import sinon from 'sinon';
import { HIT_LOG_SCRIPT } from '../../src/http/stores/hit-log/hit-log-script.js';
import { DECIDE_SCRIPT } from '../../src/redis/decide/decide-script.js';
import { ATOMIC_BLOCK_SCRIPT } from '../../src/redis/scripts/atomic-block-script.js';
import { CLEAR_SCRIPT } from '../../src/redis/scripts/clear-script.js';
import type * as RedisScriptModule from '../../src/redis/scripts/redis-script.js';
import { sha1Hex } from '../../src/redis/scripts/sha1.js';
import { UNDO_SCRIPT } from '../../src/redis/scripts/undo-script.js';
import { freshImportWithoutNodeBuiltins } from '../support/fresh-import.js';

const nodeSha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

describe('the SHA1 of a script', () => {
  it('sha1.ts: the test vectors of FIPS 180-4 (empty, one block, two blocks, a million a)', () => {
    expect(sha1Hex('')).to.equal('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    expect(sha1Hex('abc')).to.equal('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(sha1Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).to.equal('84983e441c3bd26ebaae4aa1f95129e5e54670f1');
    expect(sha1Hex('a'.repeat(1_000_000))).to.equal('34aa973cd4c4daa4f61eeb2bdbad27316534016f');
  });

  it('sha1.ts: what Node gives for every length up to three blocks (the padding’s edges at 55, 56, 63 and 64 bytes), in UTF-8', () => {
    for (let length = 0; length <= 200; length += 1) {
      const ascii = 'x'.repeat(length);
      expect(sha1Hex(ascii), `${length} bytes`).to.equal(nodeSha1(ascii));
      const mixed = 'é𝄞-'.repeat(length).slice(0, length);
      expect(sha1Hex(mixed), `${length} UTF-16 units`).to.equal(nodeSha1(mixed));
    }
  });

  it('sha1.ts: what Node gives for any string, and for lone surrogates (U+FFFD in both)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => sha1Hex(text) === nodeSha1(text)),
      { numRuns: 500 },
    );
    for (const text of ['\uD800', 'a\uDC00b', '\uDBFF\uDBFF', '\uDFFF\uD800']) expect(sha1Hex(text)).to.equal(nodeSha1(text));
  });

  for (const script of [DECIDE_SCRIPT, CLEAR_SCRIPT, UNDO_SCRIPT, ATOMIC_BLOCK_SCRIPT, HIT_LOG_SCRIPT]) {
    it(`${script.name}: the same SHA1 from sha1.ts as from node:crypto, and as the script's own`, () => {
      expect(sha1Hex(script.lua)).to.equal(nodeSha1(script.lua));
      expect(script.sha1).to.equal(nodeSha1(script.lua));
    });
  }

  it('defineScript without node:crypto: computes it in JavaScript, at the first read and only then', async () => {
    const { defineScript } = await freshImportWithoutNodeBuiltins<typeof RedisScriptModule>(
      new URL('../../src/redis/scripts/redis-script.js', import.meta.url),
    );
    const encode = sinon.spy(TextEncoder.prototype, 'encode');
    try {
      const script = defineScript('probe', DECIDE_SCRIPT.lua);
      expect(encode.callCount, 'hashed when defined').to.equal(0);
      expect(script.sha1).to.equal(nodeSha1(DECIDE_SCRIPT.lua));
      expect(script.sha1).to.equal(nodeSha1(DECIDE_SCRIPT.lua));
      expect(encode.callCount, 'hashed once').to.equal(1);
    } finally {
      encode.restore();
    }
  });
});
