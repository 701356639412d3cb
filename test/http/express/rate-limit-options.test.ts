// The options of the Express middleware and of the header helpers, checked
// once when the middleware (or the headers function) is made: unknown names,
// wrong types and out-of-range values are refused with the option's name and
// the value received, and nothing is checked per request.

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter } from '../../../src/index.js';
import { createRateLimitHeaders, rateLimit, type RateLimitHeaderOptions, type RateLimitOptions } from '../../../src/http/express/express-middleware.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../../../src/errors/invalid-option-error.js';

const limiter = new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 });
const made =
  (options: object): (() => unknown) =>
  () =>
    rateLimit(options as RateLimitOptions);

describe('rateLimit options', () => {
  it('refuses what is not an options object, and unknown options', () => {
    expect(made(undefined as never)).to.throw(InvalidOptionTypeError, /Expected the options to be an object, got `undefined`/);
    expect(made({ limiter, keys: () => 'x' })).to.throw(InvalidOptionTypeError, /Unknown option `keys`; the options are limiter, key, skip/);
  });

  it('refuses a limiter that is neither a RollingRateLimiter nor a RateLimiterStack', () => {
    expect(made({})).to.throw(InvalidOptionTypeError, /`limiter` to be a RollingRateLimiter or a RateLimiterStack, got `undefined`/);
    expect(made({ limiter: {} })).to.throw(TypeError, /RollingRateLimiter or a RateLimiterStack, got an object/);
    expect(made({ limiter: { limitWithInfo: () => undefined } })).to.throw(TypeError, /tier 0 has no namespace/);
  });

  it('names the option and the value of a callback that is not a function', () => {
    for (const name of ['key', 'skip', 'onLimited', 'onStoreFailure', 'policyName']) {
      expect(made({ limiter, [name]: 'ip' }), name).to.throw(InvalidOptionTypeError, new RegExp(`\`${name}\` to be a function, got \`"ip"\` \\(string\\)`));
    }
  });

  it('takes a message as a string, an object or a function, and not with onLimited', () => {
    for (const message of ['slow down', { error: 'x' }, () => 'x']) expect(made({ limiter, message })).to.not.throw();
    expect(made({ limiter, message: 429 })).to.throw(InvalidOptionTypeError, /`message` to be a string, an object or a function, got `429` \(number\)/);
    expect(made({ limiter, message: null })).to.throw(TypeError, /`message`.*`null`/);
    expect(made({ limiter, message: 'x', onLimited: () => undefined })).to.throw(TypeError, /either `message` or `onLimited`/);
  });

  it('refuses a headers style it does not know: a string out of range, another type a TypeError', () => {
    expect(made({ limiter, headers: 'draft-10' })).to.throw(
      InvalidOptionRangeError,
      /`headers` to be one of 'draft', 'legacy', 'both', false, got `"draft-10"`/,
    );
    expect(made({ limiter, headers: true })).to.throw(InvalidOptionTypeError, /`headers`.*`true` \(boolean\)/);
  });

  it('checks ipv6Subnet and validate', () => {
    expect(made({ limiter, ipv6Subnet: 80 })).to.throw(InvalidOptionRangeError, /`ipv6Subnet` to be an integer from 32 to 64, got `80`/);
    expect(made({ limiter, ipv6Subnet: '56' })).to.throw(InvalidOptionTypeError, /ipv6Subnet/);
    expect(made({ limiter, ipv6Subnet: false, validate: false })).to.not.throw();
    expect(made({ limiter, validate: 'yes' })).to.throw(InvalidOptionTypeError, /`validate` to be a boolean, got `"yes"`/);
  });

  it('refuses two tiers with one policy name', () => {
    const stack = new RateLimiterStack([limiter, new RollingRateLimiter({ namespace: 'b', interval: 1, maxInInterval: 1 })]);
    expect(made({ limiter: stack, policyName: () => 'same' })).to.throw(TypeError, /Two tiers have the policy name "same"/);
  });

  it('does not touch the caller’s options', () => {
    const options = Object.freeze({ limiter, headers: 'legacy' as const });
    expect(() => rateLimit(options)).to.not.throw();
    expect(options).to.deep.equal({ limiter, headers: 'legacy' });
  });
});

describe('createRateLimitHeaders options', () => {
  const headersFor =
    (options: unknown): (() => unknown) =>
    () =>
      createRateLimitHeaders(limiter, options as RateLimitHeaderOptions);

  it('takes no options, or headers and policyName', () => {
    expect(headersFor(undefined)).to.not.throw();
    expect(headersFor({ headers: 'both', policyName: () => 'api' })).to.not.throw();
  });

  it('refuses unknown options and values of the wrong kind, naming them', () => {
    expect(headersFor({ header: 'draft' })).to.throw(InvalidOptionTypeError, /Unknown option `header`; the options are headers, policyName/);
    expect(headersFor({ headers: 'x' })).to.throw(InvalidOptionRangeError, /`headers`.*`"x"`/);
    expect(headersFor({ policyName: 'api' })).to.throw(InvalidOptionTypeError, /`policyName` to be a function, got `"api"`/);
    expect(headersFor('draft')).to.throw(InvalidOptionTypeError, /header options to be an object, got `"draft"`/);
    expect(() => createRateLimitHeaders(limiter, { policyName: () => 7 as unknown as string })).to.throw(TypeError, /`policyName` to return a string, got `7`/);
  });
});
