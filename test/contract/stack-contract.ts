// The behavioural contract of RateLimiterStack (docs/semantics.md, "Stacks"), written
// once and run against every store: each backend's test file calls
// describeStackContract with the same factory it gives describeLimiterContract.
// Examples on a TestClock first (stack-decisions.ts, stack-construction.ts),
// then a randomized model test against the independent reference of
// test/support/reference-stack.ts (stack-model-test.ts).

import { RateLimiterStack, type RollingRateLimiter } from '../../src/index.js';
import { TestClock } from '../support/test-clock.js';
import type { ContractOptions, LimiterFactory } from './limiter-contract.js';
import { describeStackConstruction } from './stack-construction.js';
import { describeStackDecisions } from './stack-decisions.js';
import { describeStackModelTest } from './stack-model-test.js';

export interface StackContractOptions {
  /** How many random schedules the stacked model test runs (MODEL_SCHEDULES overrides it). */
  readonly modelSchedules: number;
  /**
   * Builds a limiter on a different store than the backend's (e.g. an
   * in-memory one next to Redis): the stack must refuse to stack it with the
   * backend's limiters. Omitted where no other store is at hand.
   */
  readonly foreignLimiter?: (options: ContractOptions) => RollingRateLimiter;
  /**
   * Whether each limiter keeps its state apart (in memory): two limiters with
   * one namespace then never share keys, and stack together.
   */
  readonly ownStatePerLimiter?: boolean;
  /** Whether the stacks batch their decisions (`batch: true`). */
  readonly batch?: boolean;
}

/** What the stack contract's examples build on: the backend's factory, a fresh TestClock per test, and limiters on both. */
export interface StackFixture {
  /** The backend's limiter factory (available once the suite's `before` hooks have run). */
  readonly create: LimiterFactory;
  /** This test's clock: a new TestClock before each test. */
  readonly clock: TestClock;
  /** A limiter on the backend and the test's clock; each gets its own namespace unless one is given (the stack refuses duplicates). */
  readonly make: (overrides?: Partial<ContractOptions>) => RollingRateLimiter;
  /** A stack of `limiters` with the backend's stack options (`batch`). */
  readonly stack: (limiters: readonly RollingRateLimiter[]) => RateLimiterStack;
}

/** Sets up the fixture's hooks in the calling describe block. */
function useStackFixture(factory: () => LimiterFactory, batch: boolean): StackFixture {
  let create: LimiterFactory | undefined;
  let clock: TestClock | undefined;
  let tierCounter = 0;
  before(() => {
    create = factory();
  });
  beforeEach(() => {
    clock = new TestClock();
  });
  const fixture: StackFixture = {
    get create(): LimiterFactory {
      if (create === undefined) throw new Error('the stack contract has not started yet');
      return create;
    },
    get clock(): TestClock {
      if (clock === undefined) throw new Error('no test is running');
      return clock;
    },
    make: (overrides = {}) => {
      tierCounter += 1;
      return fixture.create({ interval: 1000, maxInInterval: 3, clock: fixture.clock.read, namespace: `tier-${tierCounter}`, ...overrides });
    },
    stack: (limiters) => new RateLimiterStack(limiters, { batch }),
  };
  return fixture;
}

export function describeStackContract(backend: string, factory: () => LimiterFactory, options: StackContractOptions): void {
  describe(`RateLimiterStack contract on ${backend}`, () => {
    const fixture = useStackFixture(factory, options.batch === true);
    describeStackDecisions(fixture);
    describeStackConstruction(fixture, options);
    describeStackModelTest(() => fixture.create, options.modelSchedules, options.batch === true, fixture.stack);
  });
}
