import { expect } from 'chai';
import { ratioInRuns, throughputRatio, type BenchResults } from '../../bench/results.js';
import type { ThroughputRecord } from '../../bench/scenarios/throughput.js';

const SCENARIO = 'redis-many-c64';
const A = { scenario: SCENARIO, contender: 'lib' };
const B = { scenario: SCENARIO, contender: 'floor' };

/** A record whose summed sample agrees with its slices (each slice 250 ms long). */
function record(run: number, contender: string, slicePerSecond: number[] | undefined, perSecond?: number): ThroughputRecord {
  const rates = slicePerSecond ?? [perSecond ?? 0];
  const decisions = rates.reduce((sum, rate) => sum + rate / 4, 0);
  const elapsedMs = rates.length * 250;
  return {
    run,
    scenario: SCENARIO,
    contender,
    sample: { decisions, blocked: 0, elapsedMs, perSecond: (decisions * 1000) / elapsedMs },
    ...(slicePerSecond === undefined ? {} : { slicePerSecond }),
  };
}

function resultsOf(throughput: ThroughputRecord[]): BenchResults {
  return { throughput, bytes: [], keyMemory: [], heap: [] } as unknown as BenchResults;
}

describe('bench throughput ratios', () => {
  it('pairs slice k with slice k, so that a burst on one slice of A does not move the ratio', () => {
    // Round 4 of run 0 was slowed for A alone (a burst of load from elsewhere).
    const results = resultsOf([record(0, 'lib', [100, 100, 100, 10]), record(0, 'floor', [100, 100, 100, 100])]);
    expect(ratioInRuns(results, A, B).median).to.be.closeTo(310 / 400, 1e-9);
    const paired = throughputRatio(results, A, B);
    expect(paired.median).to.equal(1);
    expect(paired.pairs).to.equal(4);
  });

  it('pools the pairs of every run, and spreads the per-run medians', () => {
    const results = resultsOf([
      record(0, 'lib', [90, 90, 90]),
      record(0, 'floor', [100, 100, 100]),
      record(1, 'lib', [100, 100, 120]),
      record(1, 'floor', [100, 100, 100]),
    ]);
    // Pairs: 0.9, 0.9, 0.9, 1.0, 1.0, 1.2: the median of six is the mean of the middle two.
    const paired = throughputRatio(results, A, B);
    expect(paired.median).to.be.closeTo(0.95, 1e-9);
    expect(paired).to.include({ runs: 2, pairs: 6 });
    expect(paired.min).to.be.closeTo(0.9, 1e-9);
    expect(paired.max).to.be.closeTo(1, 1e-9);
  });

  it('follows the slices of rounds both took, and skips a run where either failed', () => {
    const results = resultsOf([
      record(0, 'lib', [50, 60]),
      record(0, 'floor', [100, 100, 100]),
      { run: 1, scenario: SCENARIO, contender: 'lib', error: 'boom' },
      record(1, 'floor', [100, 100]),
    ]);
    const paired = throughputRatio(results, A, B);
    expect(paired).to.include({ runs: 1, pairs: 2 });
    expect(paired.median).to.be.closeTo(0.55, 1e-9);
  });

  it('falls back to whole measurements for results written before slices were kept', () => {
    const results = resultsOf([record(0, 'lib', undefined, 80), record(0, 'floor', undefined, 100), record(1, 'lib', undefined, 120), record(1, 'floor', undefined, 100)]);
    const ratio = throughputRatio(results, A, B);
    expect(ratio.median).to.be.closeTo(1, 1e-9);
    expect(ratio.pairs).to.equal(undefined);
    expect([ratio.min, ratio.max]).to.deep.equal([0.8, 1.2]);
  });

  it('is NaN, not a number that could pass, when nothing was measured', () => {
    expect(throughputRatio(resultsOf([]), A, B).median).to.be.NaN;
  });
});
