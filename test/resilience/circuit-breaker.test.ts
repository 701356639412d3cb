import { expect } from 'chai';
import sinon from 'sinon';
import {
  CircuitBreaker,
  DEFAULT_CIRCUIT_BREAKER,
  type CircuitStateChange,
  type NormalizedCircuitBreakerOptions,
} from '../../src/resilience/circuit-breaker.js';
import { circuitBreakerOption as normalizeCircuitBreakerOption } from '../../src/options/circuit-breaker-options.js';
import { InvalidOptionRangeError, InvalidOptionTypeError, StoreError, TimeoutError, isRateLimiterError } from '../../src/index.js';

describe('normalizeCircuitBreakerOption', () => {
  it('gives the defaults for undefined, false for false, and fills in the fields an object leaves out', () => {
    expect(normalizeCircuitBreakerOption(undefined)).to.deep.equal({ failureThreshold: 5, cooldownMs: 1_000 });
    expect(normalizeCircuitBreakerOption(undefined)).to.equal(DEFAULT_CIRCUIT_BREAKER);
    expect(normalizeCircuitBreakerOption(false)).to.equal(false);
    expect(normalizeCircuitBreakerOption({})).to.deep.equal({ failureThreshold: 5, cooldownMs: 1_000 });
    expect(normalizeCircuitBreakerOption({ failureThreshold: 2 })).to.deep.equal({ failureThreshold: 2, cooldownMs: 1_000 });
    expect(normalizeCircuitBreakerOption({ cooldownMs: 250, failureThreshold: undefined })).to.deep.equal({ failureThreshold: 5, cooldownMs: 250 });
  });

  it('never touches the caller’s object and returns a frozen one', () => {
    const given = Object.freeze({ failureThreshold: 3 });
    const normalized = normalizeCircuitBreakerOption(given);
    expect(given).to.deep.equal({ failureThreshold: 3 });
    expect(Object.isFrozen(normalized)).to.equal(true);
  });

  it('refuses a value that is neither an object nor false with a TypeError naming `circuitBreaker`', () => {
    for (const value of [true, 0, 'on', null, [], () => ({})]) {
      const error = catchError(() => normalizeCircuitBreakerOption(value));
      expect(error, String(value)).to.be.instanceOf(InvalidOptionTypeError).and.instanceOf(TypeError);
      expect(error).to.include({ option: 'circuitBreaker', received: value, code: 'ERR_RATE_LIMITER_INVALID_OPTION' });
      expect((error as Error).message).to.match(/^Expected `circuitBreaker` to be an object \(\{ failureThreshold\?, cooldown\? \}\) or false, got /);
    }
    expect(errorMessage(() => normalizeCircuitBreakerOption(true))).to.match(/got `true` \(boolean\)$/);
  });

  it('refuses a field of the wrong type with a TypeError naming the field and the value', () => {
    const error = catchError(() => normalizeCircuitBreakerOption({ failureThreshold: '5' }));
    expect(error).to.be.instanceOf(InvalidOptionTypeError).and.include({ option: 'circuitBreaker.failureThreshold', received: '5' });
    expect((error as Error).message).to.equal('Expected `circuitBreaker.failureThreshold` to be an integer from 1 to 2147483647, got `"5"` (string)');
    expect(errorMessage(() => normalizeCircuitBreakerOption({ cooldownMs: null }))).to.equal(
      "Expected `circuitBreaker.cooldownMs` to be a whole number of milliseconds from 1 to 2147483647, or a duration such as '500ms', '10s', '1m', '1h' or '1d', got `null`",
    );
  });

  it('takes `cooldown` (and its former name `cooldownMs`) as milliseconds or a duration string, and refuses both at once', () => {
    expect(normalizeCircuitBreakerOption({ cooldown: '1.5s' })).to.deep.equal({ failureThreshold: 5, cooldownMs: 1_500 });
    expect(normalizeCircuitBreakerOption({ cooldown: 250 })).to.deep.equal({ failureThreshold: 5, cooldownMs: 250 });
    expect(normalizeCircuitBreakerOption({ cooldownMs: '2s' })).to.deep.equal({ failureThreshold: 5, cooldownMs: 2_000 });
    expect(catchError(() => normalizeCircuitBreakerOption({ cooldown: 1, cooldownMs: 1 }))).to.be.instanceOf(InvalidOptionTypeError);
    expect(catchError(() => normalizeCircuitBreakerOption({ cooldown: '1 s' }))).to.be.instanceOf(InvalidOptionTypeError);
  });

  it('refuses a number out of range with a RangeError naming the field and the value', () => {
    const cases: [Record<string, unknown>, string, unknown][] = [
      [{ failureThreshold: 0 }, 'circuitBreaker.failureThreshold', 0],
      [{ failureThreshold: 1.5 }, 'circuitBreaker.failureThreshold', 1.5],
      [{ failureThreshold: Number.NaN }, 'circuitBreaker.failureThreshold', Number.NaN],
      [{ cooldownMs: -1 }, 'circuitBreaker.cooldownMs', -1],
      [{ cooldownMs: Infinity }, 'circuitBreaker.cooldownMs', Infinity],
      [{ cooldownMs: 2 ** 31 }, 'circuitBreaker.cooldownMs', 2 ** 31],
    ];
    for (const [value, option, received] of cases) {
      const error = catchError(() => normalizeCircuitBreakerOption(value));
      expect(error, JSON.stringify(value)).to.be.instanceOf(InvalidOptionRangeError).and.instanceOf(RangeError);
      expect(error).to.have.property('option', option);
      expect((error as InvalidOptionRangeError).received).to.deep.equal(received);
      expect((error as Error).message).to.contain(`got \`${String(received)}\` (number)`);
    }
  });

  it('refuses an unknown field with a TypeError naming it', () => {
    const error = catchError(() => normalizeCircuitBreakerOption({ failureThreshold: 5, coolDownMs: 100 }));
    expect(error).to.be.instanceOf(InvalidOptionTypeError).and.include({ option: 'circuitBreaker.coolDownMs', received: 100 });
    expect((error as Error).message).to.equal(
      'Unknown option `circuitBreaker.coolDownMs`; the options are circuitBreaker.failureThreshold, circuitBreaker.cooldown, circuitBreaker.cooldownMs',
    );
  });
});

describe('CircuitBreaker (fake timers)', () => {
  let clock: sinon.SinonFakeTimers;
  let changes: CircuitStateChange[];
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ['performance', 'Date', 'setTimeout', 'clearTimeout'] });
    changes = [];
  });
  afterEach(() => clock.restore());

  const breaker = (options: Partial<NormalizedCircuitBreakerOptions> = {}): CircuitBreaker =>
    new CircuitBreaker({ ...DEFAULT_CIRCUIT_BREAKER, ...options }, { onStateChange: (change) => changes.push(change) });
  const failure = (n: number): StoreError => new StoreError(`failure ${n}`);
  /** Admits a call and reports it failed; returns the gate it was given. */
  const failOnce = (subject: CircuitBreaker, n: number): string => {
    const gate = subject.admit();
    if (gate !== 'open') subject.failed(gate, failure(n));
    return gate;
  };

  it('lets every call through while closed, and keeps counting only failures in a row', () => {
    const subject = breaker({ failureThreshold: 3 });
    for (let round = 0; round < 10; round++) {
      expect(failOnce(subject, 1)).to.equal('call');
      expect(failOnce(subject, 2)).to.equal('call');
      expect(subject.consecutiveFailures).to.equal(2);
      const gate = subject.admit();
      expect(gate).to.equal('call');
      subject.succeeded('call');
      expect(subject.consecutiveFailures).to.equal(0);
    }
    expect(subject.state).to.equal('closed');
    expect(changes).to.deep.equal([]);
  });

  it('opens at the failureThreshold-th failure in a row, and then decides every call without the store', () => {
    const subject = breaker({ failureThreshold: 5, cooldownMs: 1_000 });
    for (let i = 1; i <= 4; i++) expect(failOnce(subject, i)).to.equal('call');
    expect(subject.state).to.equal('closed');
    expect(failOnce(subject, 5)).to.equal('call');
    expect(subject.state).to.equal('open');
    expect(changes).to.have.length(1);
    expect(changes[0]).to.deep.include({ from: 'closed', to: 'open', consecutiveFailures: 5 });
    expect((changes[0]?.failure as Error).message).to.equal('failure 5');
    for (let i = 0; i < 1_000; i++) expect(subject.admit()).to.equal('open');
    clock.tick(999);
    expect(subject.admit()).to.equal('open');
  });

  it('lets exactly one probe through after cooldownMs, and keeps the others out while it is in flight', () => {
    const subject = breaker({ failureThreshold: 1, cooldownMs: 1_000 });
    failOnce(subject, 1);
    clock.tick(1_000);
    expect(subject.admit()).to.equal('probe');
    expect(subject.state).to.equal('half-open');
    for (let i = 0; i < 100; i++) expect(subject.admit()).to.equal('open');
    clock.tick(60_000); // however long the probe takes (the store call has its own timeout)
    expect(subject.admit()).to.equal('open');
    expect(changes.map((change) => change.to)).to.deep.equal(['open', 'half-open']);
    expect(changes[1]).to.not.have.property('failure');
  });

  it('closes when the probe succeeds, with the count of failures reset', () => {
    const subject = breaker({ failureThreshold: 2, cooldownMs: 500 });
    failOnce(subject, 1);
    failOnce(subject, 2);
    clock.tick(500);
    expect(subject.admit()).to.equal('probe');
    subject.succeeded('probe');
    expect(subject.state).to.equal('closed');
    expect(subject.consecutiveFailures).to.equal(0);
    expect(subject.admit()).to.equal('call');
    expect(changes.map(({ from, to, consecutiveFailures }) => [from, to, consecutiveFailures])).to.deep.equal([
      ['closed', 'open', 2],
      ['open', 'half-open', 2],
      ['half-open', 'closed', 0],
    ]);
    // Closed again, it takes failureThreshold new failures to open.
    expect(failOnce(subject, 3)).to.equal('call');
    expect(subject.state).to.equal('closed');
    expect(failOnce(subject, 4)).to.equal('call');
    expect(subject.state).to.equal('open');
  });

  it('opens again for a whole new cooldown when the probe fails', () => {
    const subject = breaker({ failureThreshold: 1, cooldownMs: 1_000 });
    failOnce(subject, 1);
    clock.tick(1_500);
    expect(subject.admit()).to.equal('probe');
    clock.tick(300); // the probe takes 300 ms to fail
    subject.failed('probe', new TimeoutError(300));
    expect(subject.state).to.equal('open');
    clock.tick(999);
    expect(subject.admit(), 'the cooldown counts from the failed probe').to.equal('open');
    clock.tick(1);
    expect(subject.admit()).to.equal('probe');
    expect(changes.map((change) => change.to)).to.deep.equal(['open', 'half-open', 'open', 'half-open']);
    expect(changes[2]?.failure).to.be.instanceOf(TimeoutError);
  });

  it('ignores the outcomes of calls admitted before the circuit opened', () => {
    const subject = breaker({ failureThreshold: 2, cooldownMs: 1_000 });
    const early = [subject.admit(), subject.admit(), subject.admit()];
    expect(early).to.deep.equal(['call', 'call', 'call']);
    subject.failed('call', failure(1));
    subject.failed('call', failure(2));
    expect(subject.state).to.equal('open');
    subject.succeeded('call'); // the third call answers late: the circuit stays open
    subject.failed('call', failure(3)); // and a late failure does not restart the cooldown
    expect(subject.state).to.equal('open');
    clock.tick(1_000);
    expect(subject.admit()).to.equal('probe');
    subject.succeeded('call'); // a late call's success is not the probe's
    subject.failed('call', failure(4));
    expect(subject.state).to.equal('half-open');
    subject.succeeded('probe');
    expect(subject.state).to.equal('closed');
    subject.succeeded('probe'); // a second report of the same probe changes nothing
    subject.failed('probe', failure(5));
    expect(subject.state).to.equal('closed');
    expect(changes.map((change) => change.to)).to.deep.equal(['open', 'half-open', 'closed']);
  });

  it('builds the open-circuit error: a StoreError with the circuit-open code and the last failure as cause', () => {
    const subject = breaker({ failureThreshold: 3, cooldownMs: 750 });
    for (let i = 1; i <= 3; i++) failOnce(subject, i);
    const error = subject.openError();
    expect(error).to.be.instanceOf(StoreError);
    expect(isRateLimiterError(error)).to.equal(true);
    expect(error.code).to.equal('CIRCUIT_OPEN');
    expect((error.cause as Error).message).to.equal('failure 3');
    expect(error.message).to.equal(
      'The store was not called: its circuit breaker is open after 3 consecutive failures; the last: failure 3. ' +
        'One call probes the store again 750 ms after the circuit opened',
    );
    expect(new StoreError('plain').code, 'other store errors keep their code').to.equal('ERR_RATE_LIMITER_STORE');
  });

  it('simulates an outage: 200 calls a second, the store down for 3 s, then back', () => {
    const subject = breaker(); // 5 failures, 1 s
    let storeUp = true;
    let storeCalls = 0;
    let decidedWithoutStore = 0;
    const call = (): void => {
      const gate = subject.admit();
      if (gate === 'open') {
        decidedWithoutStore += 1;
        return;
      }
      storeCalls += 1;
      if (storeUp) subject.succeeded(gate);
      else subject.failed(gate, failure(storeCalls));
    };
    const run = (ms: number): void => {
      for (let t = 0; t < ms; t += 5) {
        call();
        clock.tick(5);
      }
    };
    run(1_000);
    expect([storeCalls, decidedWithoutStore]).to.deep.equal([200, 0]);
    storeUp = false;
    run(3_000);
    // 5 failures open it; then one probe a second, each failing: 5 to 8 store calls in 3 s.
    expect(storeCalls - 200).to.be.within(5, 8);
    expect(decidedWithoutStore).to.equal(600 - (storeCalls - 200));
    storeUp = true;
    const before = storeCalls;
    run(1_005); // within cooldownMs + one call, the probe succeeds and every call goes to the store again
    expect(subject.state).to.equal('closed');
    run(1_000);
    expect(storeCalls - before).to.be.greaterThan(200);
  });

  it('uses performance.now by default and needs no timers', () => {
    const subject = new CircuitBreaker(DEFAULT_CIRCUIT_BREAKER);
    for (let i = 0; i < 5; i++) failOnce(subject, i);
    expect(subject.state).to.equal('open');
    expect(clock.countTimers()).to.equal(0);
    clock.tick(1_000);
    expect(subject.admit()).to.equal('probe');
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function errorMessage(run: () => unknown): string {
  return (catchError(run) as Error).message;
}
