// The IP key of the HTTP integrations: IPv6 reduced to its prefix, IPv4-mapped
// addresses read as IPv4, cross-checked against express-rate-limit's own
// ipKeyGenerator (a dev dependency) and Node's BlockList on random addresses.

import { BlockList, isIP, isIPv4 } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { ipKeyGenerator } from 'express-rate-limit';
import { ipKey, ipv6SubnetOption, ipWithoutPort } from '../../src/http/ip-key.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../../src/index.js';

describe('ipKey', () => {
  it('keeps IPv4 and reads IPv4-mapped IPv6 as IPv4', () => {
    expect(ipKey('203.0.113.7')).to.equal('203.0.113.7');
    expect(ipKey('::ffff:203.0.113.7')).to.equal('203.0.113.7');
    expect(ipKey('::FFFF:cb00:7107')).to.equal('203.0.113.7');
    expect(ipKey('::ffff:203.0.113.7', false)).to.equal('203.0.113.7');
    // The deprecated IPv4-compatible notation too, as express-rate-limit reads it; `::1` stays IPv6.
    expect(ipKey('::203.0.113.7')).to.equal('203.0.113.7');
    expect(ipKey('0::0:0.0.0.0', 32)).to.equal('0.0.0.0');
  });

  it('reduces IPv6 to its /56 by default, or to the prefix given', () => {
    expect(ipKey('2001:db8:aa:bb01:1:2:3:4')).to.equal('2001:db8:aa:bb00::/56');
    expect(ipKey('2001:db8:aa:bbff::9')).to.equal('2001:db8:aa:bb00::/56');
    expect(ipKey('2001:db8:aa:cc00::1')).to.equal('2001:db8:aa:cc00::/56');
    expect(ipKey('2001:db8:aa:bb01:1:2:3:4', 64)).to.equal('2001:db8:aa:bb01::/64');
    expect(ipKey('2001:db8:aa:bb01:1:2:3:4', 32)).to.equal('2001:db8::/32');
    expect(ipKey('::1')).to.equal('::/56');
    expect(ipKey('fe80::1%eth0', 64)).to.equal('fe80::/64');
  });

  it('writes the whole address canonically with ipv6Subnet: false', () => {
    expect(ipKey('2001:DB8:0:0:0:0:0:1', false)).to.equal('2001:db8::1');
    expect(ipKey('2001:db8::1', false)).to.equal('2001:db8::1');
    expect(ipKey('2001:0:0:1:0:0:0:1', false)).to.equal('2001:0:0:1::1');
  });

  it('leaves what is not an IP address alone', () => {
    expect(ipKey('')).to.equal('');
    expect(ipKey('not an ip')).to.equal('not an ip');
  });

  it('validates ipv6Subnet', () => {
    const check = (value: unknown): unknown => ipv6SubnetOption(value, 'ipv6Subnet');
    expect(check(undefined)).to.equal(56);
    expect(check(false)).to.equal(false);
    expect(check(48)).to.equal(48);
    expect(() => check(31)).to.throw(InvalidOptionRangeError, /ipv6Subnet.*32 to 64.*`31`/);
    expect(() => check(65)).to.throw(RangeError);
    expect(() => check(56.5)).to.throw(RangeError);
    expect(() => check(true)).to.throw(InvalidOptionTypeError, /ipv6Subnet.*`true` \(boolean\)/);
    expect(() => check('56')).to.throw(TypeError);
    expect(() => ipKey('2001:db8::1', 16)).to.throw(InvalidOptionRangeError, /ipv6Subnet.*`16`/);
  });

  it("agrees with express-rate-limit's ipKeyGenerator and with BlockList on random addresses", () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), fc.integer({ min: 32, max: 64 }), (a, b, subnet) => {
        expect(ipKey(a, subnet), a).to.equal(ipKeyGenerator(a, subnet));
        // Addresses that carry an IPv4 address are keyed by it; the others by their prefix.
        if (isIPv4(ipKey(a, subnet)) || isIPv4(ipKey(b, subnet))) return;
        const block = new BlockList();
        block.addSubnet(ipKey(a, subnet).split('/')[0] ?? '', subnet, 'ipv6');
        expect(ipKey(a, subnet) === ipKey(b, subnet), `${a} and ${b} in one /${subnet}`).to.equal(block.check(b, 'ipv6'));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('ipWithoutPort and the IP checks behind it', () => {
  // The library reads addresses without `node:net` (it runs on Workers and the edge runtime); Node's own isIP is the oracle here.
  const tricky = [
    '203.0.113.7',
    '0.0.0.0',
    '255.255.255.255',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '0x7f.0.0.1',
    '1.2.3.04',
    ' 1.2.3.4',
    '::',
    '::1',
    '1::',
    '2001:db8::1',
    '2001:DB8:0:0:8:800:200C:417A',
    '2001:db8:0:0:8:800:200c:417a:1',
    '2001:db8::8::1',
    '00001::',
    '::ffff:203.0.113.7',
    '::ffff:203.0.113.07',
    '::ffff:256.0.113.7',
    '1:2:3:4:5:6:1.2.3.4',
    '1:2:3:4:5:6:7:1.2.3.4',
    'fe80::1%eth0',
    'fe80::1%',
    'fe80::1%en 0',
    'fe80::1%25',
    ':1',
    '1:',
    ':::',
    'g::1',
    '[::1]',
    '',
    'localhost',
  ];

  it('reads an address as Node does, on tricky inputs', () => {
    for (const text of tricky) expect(ipWithoutPort(text) === text, text).to.equal(isIP(text) !== 0);
  });

  it('reads random IPv6 and IPv4 texts as Node does', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    const ipv6 = fc
      .array(group, { minLength: 1, maxLength: 9 })
      .chain((groups) =>
        fc
          .integer({ min: -1, max: groups.length })
          .map((at) => (at < 0 ? groups.join(':') : `${groups.slice(0, at).join(':')}::${groups.slice(at).join(':')}`)),
      );
    const ipv4 = fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 3, maxLength: 5 }).map((parts) => parts.join('.'));
    fc.assert(
      fc.property(fc.oneof(ipv6, ipv4, fc.string({ maxLength: 12 })), (text) => (ipWithoutPort(text) === text) === (isIP(text) !== 0)),
      { numRuns: 5_000 },
    );
  });
});
