import { expect } from 'chai';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import sinon from 'sinon';
import { CircuitBreaker, DEFAULT_CIRCUIT_BREAKER } from '../../src/resilience/circuit-breaker.js';
import {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  decisionStartTime,
  publishCircuit,
  publishDecision,
  publishStoreError,
} from '../../src/core/diagnostics.js';
import type * as Diagnostics from '../../src/core/diagnostics.js';
import { StoreError, TimeoutError } from '../../src/index.js';
import { freshImportWithoutNodeBuiltins } from '../support/fresh-import.js';

/** Subscribes to `name` for the duration of `run`, and returns what was published. */
function recorded(name: string, run: () => void): unknown[] {
  const messages: unknown[] = [];
  const listener = (message: unknown): void => void messages.push(message);
  subscribe(name, listener);
  try {
    run();
  } finally {
    unsubscribe(name, listener);
  }
  return messages;
}

describe('diagnostics channels', () => {
  // A sandbox of this file's own: the default sandbox may still hold another file's fake timers.
  const sandbox = sinon.createSandbox();
  afterEach(() => sandbox.restore());

  it('names the three channels', () => {
    expect([DECISION_CHANNEL, STORE_ERROR_CHANNEL, CIRCUIT_CHANNEL]).to.deep.equal([
      'rolling-window-limiter:decision',
      'rolling-window-limiter:store-error',
      'rolling-window-limiter:circuit',
    ]);
  });

  it('publishes a decision with its namespaces, verdict, kind, decider and duration', () => {
    const clock = sandbox.useFakeTimers({ toFake: ['performance'] });
    const messages = recorded(DECISION_CHANNEL, () => {
      const startedAt = decisionStartTime();
      clock.tick(3);
      publishDecision(['push:minute', 'push:day'], true, false, 'store', startedAt);
      publishDecision(['api'], false, true, 'fallback', decisionStartTime());
    });
    expect(messages).to.deep.equal([
      { namespaces: ['push:minute', 'push:day'], blocked: true, dryRun: false, decidedBy: 'store', durationMs: 3 },
      { namespaces: ['api'], blocked: false, dryRun: true, decidedBy: 'fallback', durationMs: 0 },
    ]);
  });

  it('publishes a store failure with the error and the policy applied', () => {
    const failure = new StoreError('Redis is down');
    const timeout = new TimeoutError(250);
    const messages = recorded(STORE_ERROR_CHANNEL, () => {
      publishStoreError(['api'], failure, 'throw');
      publishStoreError(['a', 'b'], timeout, 'allow');
    });
    expect(messages).to.have.length(2);
    expect(messages[0]).to.deep.equal({ namespaces: ['api'], error: failure, policy: 'throw' });
    expect((messages[1] as { error: unknown }).error).to.equal(timeout);
    expect(messages[1]).to.deep.include({ namespaces: ['a', 'b'], policy: 'allow' });
  });

  it('publishes circuit changes, and takes a circuit breaker’s changes as they come', () => {
    const messages = recorded(CIRCUIT_CHANNEL, () => {
      const breaker = new CircuitBreaker(
        { ...DEFAULT_CIRCUIT_BREAKER, failureThreshold: 1, cooldownMs: 1 },
        { now: () => 0, onStateChange: ({ from, to, consecutiveFailures }) => publishCircuit(['api'], '127.0.0.1:7000', to, from, consecutiveFailures) },
      );
      breaker.failed(breaker.admit() as 'call', new StoreError('down'));
    });
    expect(messages).to.deep.equal([{ namespaces: ['api'], node: '127.0.0.1:7000', state: 'open', previous: 'closed', consecutiveFailures: 1 }]);
  });

  it('builds nothing and reads no clock while nobody subscribes', () => {
    const now = sandbox.spy(performance, 'now');
    expect(decisionStartTime()).to.equal(-1);
    publishDecision(['api'], false, false, 'store', 12);
    publishStoreError(['api'], new StoreError('x'), 'throw');
    publishCircuit(['api'], undefined, 'open', 'closed', 5);
    expect(now.callCount).to.equal(0);
  });

  it('skips a decision whose start was not timed (a subscriber arrived during the call)', () => {
    const startedAt = decisionStartTime();
    const messages = recorded(DECISION_CHANNEL, () => publishDecision(['api'], false, false, 'store', startedAt));
    expect(startedAt).to.equal(-1);
    expect(messages).to.deep.equal([]);
  });

  it('stops publishing once the last subscriber leaves', () => {
    const messages: unknown[] = [];
    const listener = (message: unknown): void => void messages.push(message);
    subscribe(CIRCUIT_CHANNEL, listener);
    publishCircuit(['api'], undefined, 'open', 'closed', 5);
    unsubscribe(CIRCUIT_CHANNEL, listener);
    publishCircuit(['api'], undefined, 'half-open', 'open', 5);
    expect(messages).to.have.length(1);
  });

  it('publishes nothing, reads no clock and throws nothing on a runtime without node:diagnostics_channel (the module is looked up, not imported)', async () => {
    const silent = await freshImportWithoutNodeBuiltins<typeof Diagnostics>(new URL('../../src/core/diagnostics.js', import.meta.url));
    const now = sandbox.spy(performance, 'now');
    const messages = recorded(DECISION_CHANNEL, () => {
      expect(silent.decisionStartTime()).to.equal(-1);
      silent.publishDecision(['api'], false, false, 'store', 0);
      silent.publishStoreError(['api'], new StoreError('x'), 'throw');
      silent.publishCircuit(['api'], undefined, 'open', 'closed', 5);
      silent.publishWarning('CODE', 'message', 'ioredis');
    });
    expect(messages).to.deep.equal([]);
    expect(now.callCount).to.equal(0);
  });
});
