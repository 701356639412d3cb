// Rules read from configuration (a gateway's JSON or YAML file): the duration
// parser, its type guard, and the rule validator, whose every error names the
// rule's path in the file. What they accept builds a limiter or a stack
// without a cast; what they refuse, they refuse as the limiter would, with
// the library's errors.

import { expect } from 'chai';
import {
  InvalidOptionRangeError,
  InvalidOptionTypeError,
  RateLimiterStack,
  RollingRateLimiter,
  isDuration,
  isRateLimiterError,
  parseDuration,
  parseRule,
  parseRules,
  type Duration,
  type LimiterRule,
} from '../../src/index.js';

/** What `run` throws (undefined when it returns). */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseDuration and isDuration', () => {
  const good: [unknown, number][] = [
    [0, 0],
    [250, 250],
    [1e12, 1e12],
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['0s', 0],
  ];
  for (const [value, ms] of good) {
    it(`reads ${JSON.stringify(value)} as ${ms} ms, and the guard agrees`, () => {
      expect(parseDuration(value)).to.equal(ms);
      expect(isDuration(value)).to.equal(true);
    });
  }

  const wrongType: unknown[] = ['soon', '10', '10 s', '10sec', '1m30s', '-1s', '', 'Infinity', null, undefined, true, {}, [], ['1s'], 10n];
  for (const value of wrongType) {
    it(`refuses ${typeof value === 'bigint' ? '10n' : (JSON.stringify(value) ?? 'undefined')} with a TypeError naming the value, and the guard says false`, () => {
      const error = thrown(() => parseDuration(value, 'routes[2].limits[0].interval'));
      expect(error).to.be.instanceOf(InvalidOptionTypeError).and.to.be.instanceOf(TypeError);
      expect(isRateLimiterError(error)).to.equal(true);
      expect(error).to.include({ option: 'routes[2].limits[0].interval', received: value });
      expect((error as Error).message).to.match(/^Expected `routes\[2\]\.limits\[0\]\.interval` to be .*a duration such as '500ms', '10s'/);
      if (typeof value === 'string') expect((error as Error).message).to.include(JSON.stringify(value));
      expect(isDuration(value)).to.equal(false);
    });
  }

  const outOfRange: unknown[] = [-1, 1.5, NaN, Infinity, 1e12 + 1, '0.5ms', '20000000d', '1.0001s'];
  for (const value of outOfRange) {
    it(`refuses ${String(value)} with a RangeError, and the guard says false`, () => {
      const error = thrown(() => parseDuration(value));
      expect(error).to.be.instanceOf(InvalidOptionRangeError).and.to.be.instanceOf(RangeError);
      expect((error as Error).message).to.include('`duration`');
      expect(isDuration(value)).to.equal(false);
    });
  }

  it('narrows untyped data to a Duration that a limiter takes without a cast', () => {
    const interval: unknown = (JSON.parse('{ "interval": "30s" }') as { interval: unknown }).interval;
    if (!isDuration(interval)) throw new Error('not a duration');
    const typed: Duration = interval;
    expect(new RollingRateLimiter({ interval: typed, maxInInterval: 1 }).interval).to.equal(30_000);
  });
});

describe('parseRule', () => {
  it('returns the rule in milliseconds with the defaults filled in, and leaves the data alone', () => {
    const data = Object.freeze({ interval: '1m', maxInInterval: 10 });
    expect(parseRule(data)).to.deep.equal({ interval: 60_000, maxInInterval: 10, minDifference: 0, countBlocked: true });
    expect(parseRule({ namespace: 'search', interval: 1_000, maxInInterval: 3, minDifference: '250ms', countBlocked: false })).to.deep.equal({
      namespace: 'search',
      interval: 1_000,
      maxInInterval: 3,
      minDifference: 250,
      countBlocked: false,
    });
    expect(data).to.deep.equal({ interval: '1m', maxInInterval: 10 });
  });

  it('builds a limiter with the same rule the options would give', () => {
    const rule: LimiterRule = parseRule(JSON.parse('{ "interval": "10s", "maxInInterval": 2, "minDifference": "1s" }'));
    const limiter = new RollingRateLimiter({ ...rule, namespace: 'from-config' });
    expect(limiter).to.include({ interval: 10_000, maxInInterval: 2, minDifference: 1_000, countBlocked: true, namespace: 'from-config' });
  });

  /** Each refusal: the data, the error class, the path it names, and a part of its message. */
  const refusals: [string, unknown, typeof InvalidOptionTypeError | typeof InvalidOptionRangeError, string, RegExp][] = [
    [
      'a duration that does not read',
      { interval: 'soon', maxInInterval: 1 },
      InvalidOptionTypeError,
      'routes[2].limits[0].interval',
      /got `"soon"` \(string\)/,
    ],
    ['a missing interval', { maxInInterval: 1 }, InvalidOptionTypeError, 'routes[2].limits[0].interval', /got `undefined`/],
    ['a missing maxInInterval', { interval: '1s' }, InvalidOptionTypeError, 'routes[2].limits[0].maxInInterval', /got neither/],
    [
      'both maxInInterval and maxCostInInterval',
      { interval: '1s', maxInInterval: 1, maxCostInInterval: 100 },
      InvalidOptionTypeError,
      'routes[2].limits[0].maxCostInInterval',
      /got both/,
    ],
    ['maxInInterval as a string', { interval: '1s', maxInInterval: '10' }, InvalidOptionTypeError, 'routes[2].limits[0].maxInInterval', /an integer from 1/],
    ['maxInInterval 0', { interval: '1s', maxInInterval: 0 }, InvalidOptionRangeError, 'routes[2].limits[0].maxInInterval', /got `0` \(number\)/],
    ['an interval of 0', { interval: 0, maxInInterval: 1 }, InvalidOptionRangeError, 'routes[2].limits[0].interval', /from 1 to/],
    [
      'a misspelt key',
      { interval: '1s', maxInInterval: 1, minDiference: '1s' },
      InvalidOptionTypeError,
      'routes[2].limits[0].minDiference',
      /Unknown key .*its keys are namespace, interval, maxInInterval, maxCostInInterval, minDifference, countBlocked/,
    ],
    [
      'a key inherited by JSON',
      JSON.parse('{ "interval": "1s", "maxInInterval": 1, "__proto__": { "countBlocked": false } }'),
      InvalidOptionTypeError,
      'routes[2].limits[0].__proto__',
      /Unknown key/,
    ],
    [
      'countBlocked as a string',
      { interval: '1s', maxInInterval: 1, countBlocked: 'no' },
      InvalidOptionTypeError,
      'routes[2].limits[0].countBlocked',
      /a boolean/,
    ],
    ['an empty namespace', { interval: '1s', maxInInterval: 1, namespace: '' }, InvalidOptionRangeError, 'routes[2].limits[0].namespace', /non-empty string/],
    [
      'a gap longer than the window',
      { interval: '1m', maxInInterval: 5, minDifference: '2m' },
      InvalidOptionRangeError,
      'routes[2].limits[0].minDifference',
      /at most `routes\[2\]\.limits\[0\]\.interval` \(60000 ms\), got `"2m"`/,
    ],
    ['null', null, InvalidOptionTypeError, 'routes[2].limits[0]', /a limiter rule, an object with `interval` and `maxInInterval`, got `null`/],
    ['a list', [{ interval: '1s', maxInInterval: 1 }], InvalidOptionTypeError, 'routes[2].limits[0]', /got an array/],
    ['a string', '10 per minute', InvalidOptionTypeError, 'routes[2].limits[0]', /got `"10 per minute"`/],
  ];
  for (const [what, data, errorClass, path, message] of refusals) {
    it(`refuses ${what}, naming ${path}`, () => {
      const error = thrown(() => parseRule(data, 'routes[2].limits[0]'));
      expect(error).to.be.instanceOf(errorClass);
      expect(isRateLimiterError(error)).to.equal(true);
      expect(error).to.have.property('option', path);
      expect((error as Error).message)
        .to.include(`\`${path}\``)
        .and.to.match(message);
    });
  }

  it("names the rule 'rule' when no path is given", () => {
    expect((thrown(() => parseRule({ interval: 'soon', maxInInterval: 1 })) as Error).message).to.include('`rule.interval`');
  });
});

describe('parseRules', () => {
  it('reads a budget of cost (maxCostInInterval), which builds a limiter that weighs attempts by their cost', async () => {
    const rule = parseRule({ interval: '1m', maxCostInInterval: 1_000, countBlocked: false }, 'tpm');
    expect(rule).to.deep.equal({ interval: 60_000, maxCostInInterval: 1_000, minDifference: 0, countBlocked: false });
    const limiter = new RollingRateLimiter({ ...rule, namespace: 'tpm' });
    expect(await limiter.limitWithInfo('a', { cost: 600 })).to.include({ blocked: false, costRemaining: 400 });
    expect(await limiter.limit('a', { cost: 600 })).to.equal(true);
  });

  it('reads a list of tiers in order, and one rule as a list of one', () => {
    const tiers = parseRules([
      { interval: '1s', maxInInterval: 5 },
      { interval: '1m', maxInInterval: 100, countBlocked: false },
    ]);
    expect(tiers).to.deep.equal([
      { interval: 1_000, maxInInterval: 5, minDifference: 0, countBlocked: true },
      { interval: 60_000, maxInInterval: 100, minDifference: 0, countBlocked: false },
    ]);
    expect(parseRules({ interval: '1h', maxInInterval: 1 })).to.deep.equal([{ interval: 3_600_000, maxInInterval: 1, minDifference: 0, countBlocked: true }]);
  });

  it('builds a stack from the tiers, which decides as the rules say', async () => {
    const tiers = parseRules(JSON.parse('[{ "interval": "1m", "maxInInterval": 3 }, { "interval": "1s", "maxInInterval": 1 }]'));
    let now = Date.UTC(2026, 0, 1) * 1000;
    const clock = (): number => now; // one clock for every tier, as a stack needs
    const stack = new RateLimiterStack(tiers.map((rule, i) => new RollingRateLimiter({ ...rule, namespace: `tier-${i}`, clock })));
    expect(await stack.limit('a')).to.equal(false);
    expect(await stack.limit('a')).to.equal(true); // the 1 s tier
    now += 1_000_000;
    expect(await stack.limit('a')).to.equal(false);
  });

  it('names each rule by its place in the list: routes[2].limits[1].interval', () => {
    const error = thrown(() =>
      parseRules(
        [
          { interval: '1s', maxInInterval: 5 },
          { interval: 'soon', maxInInterval: 5 },
        ],
        'routes[2].limits',
      ),
    );
    expect(error).to.be.instanceOf(InvalidOptionTypeError).and.to.have.property('option', 'routes[2].limits[1].interval');
    expect((error as Error).message)
      .to.include('`routes[2].limits[1].interval`')
      .and.to.include('"soon"');
  });

  it('refuses an empty list, a hole in one, something that is neither a list nor an object, and two tiers with one namespace', () => {
    const cases: [unknown, string, RegExp][] = [
      [[], 'routes[0].limits', /at least one limiter rule, got an empty list/],
      // eslint-disable-next-line no-sparse-arrays -- a hole, as `[1, , 2]` leaves one
      [[{ interval: '1s', maxInInterval: 1 }, , { interval: '1m', maxInInterval: 9 }], 'routes[0].limits[1]', /got `undefined`/],
      ['1/s', 'routes[0].limits', /a list of limiter rules, or one rule, got `"1\/s"`/],
      [42, 'routes[0].limits', /got `42` \(number\)/],
      [undefined, 'routes[0].limits', /got `undefined`/],
      [
        [
          { interval: '1s', maxInInterval: 1, namespace: 'burst' },
          { interval: '1m', maxInInterval: 9, namespace: 'burst' },
        ],
        'routes[0].limits[1].namespace',
        /`routes\[0\]\.limits\[1\]\.namespace` is `burst`, as is `routes\[0\]\.limits\[0\]\.namespace`/,
      ],
    ];
    for (const [data, path, message] of cases) {
      const error = thrown(() => parseRules(data, 'routes[0].limits'));
      expect(error, path).to.be.instanceOf(InvalidOptionTypeError).and.to.have.property('option', path);
      expect((error as Error).message).to.match(message);
    }
  });

  it("names the list 'rules' when no path is given", () => {
    expect((thrown(() => parseRules([{ interval: '1s' }])) as Error).message).to.include('`rules[0].maxInInterval`');
  });
});
