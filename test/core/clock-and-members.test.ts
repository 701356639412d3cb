import { expect } from 'chai';
import { localMicroseconds, microsecondsToWholeMillisecondsUp } from '../../src/core/clock.js';
import sinon from 'sinon';
import { nextMember } from '../../src/core/identity.js';
import type * as Identity from '../../src/core/identity.js';
import { freshImport } from '../support/fresh-import.js';

describe('localMicroseconds', () => {
  it('returns integer microseconds since the epoch that follow the wall clock', () => {
    const before = Date.now() * 1000;
    const now = localMicroseconds();
    const after = (Date.now() + 1) * 1000;
    expect(Number.isSafeInteger(now)).to.equal(true);
    expect(now).to.be.within(before, after);
  });

  it('is never ahead of the wall clock and never goes back, even when called many times within a microsecond', () => {
    let previous = localMicroseconds();
    for (let i = 0; i < 300_000; i += 1) {
      const now = localMicroseconds();
      const wallEndUs = (Date.now() + 1) * 1000;
      if (now > wallEndUs - 1) expect.fail(`reading ${now} is ahead of the wall clock's millisecond ending at ${wallEndUs}`);
      if (now < previous) expect.fail(`reading ${now} went back from ${previous}`);
      previous = now;
    }
  });

  it('stays on the wall clock after a million readings (no drift from forcing readings apart)', () => {
    for (let i = 0; i < 1_000_000; i += 1) localMicroseconds();
    const now = localMicroseconds();
    expect(now).to.be.at.most((Date.now() + 1) * 1000 - 1);
    expect(now).to.be.at.least((Date.now() - 5) * 1000);
  });
});

describe('microsecondsToWholeMillisecondsUp', () => {
  it('rounds up so a wait is never reported short', () => {
    expect(microsecondsToWholeMillisecondsUp(0)).to.equal(0);
    expect(microsecondsToWholeMillisecondsUp(1)).to.equal(1);
    expect(microsecondsToWholeMillisecondsUp(1000)).to.equal(1);
    expect(microsecondsToWholeMillisecondsUp(1001)).to.equal(2);
  });
});

describe('nextMember', () => {
  it('is unique and short', () => {
    const members = new Set<string>();
    for (let i = 0; i < 100_000; i += 1) members.add(nextMember());
    expect(members.size).to.equal(100_000);
    for (const member of members) expect(member.length).to.be.at.most(12);
  });

  it('draws its tag (8 base-36 characters) from crypto.getRandomValues at the first member, not at import (workerd forbids random values there), and once', async () => {
    const getRandomValues = sinon.spy(globalThis.crypto, 'getRandomValues');
    try {
      const identity = await freshImport<typeof Identity>(new URL('../../src/core/identity.js', import.meta.url));
      expect(getRandomValues.callCount, 'random values drawn at import').to.equal(0);
      const [first, second] = [identity.nextMember(), identity.nextMember()];
      expect(getRandomValues.callCount).to.equal(1);
      expect(first).to.match(/^[0-9a-z]{8}1$/);
      expect(second).to.equal(`${first.slice(0, 8)}2`);
    } finally {
      getRandomValues.restore();
    }
  });
});
