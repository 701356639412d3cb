import { expect } from 'chai';
import { evaluateTargets, type BenchData } from '../../bench/targets.js';
import type { ThroughputRecord } from '../../bench/throughput.js';

const NAME = 'MULTI path (useScript: false) / bare MULTI of its commands, ioredis, many ids, c64';

function record(run: number, contender: string, slices: number[]): ThroughputRecord {
  return { run, scenario: 'many-c64', contender, slices, perSecond: slices.reduce((a, b) => a + b, 0) / slices.length };
}

function target(throughput: ThroughputRecord[], footprint: BenchData['footprint'] = {}) {
  return evaluateTargets({ throughput, footprint }).find((t) => t.name === NAME);
}

describe('bench targets', () => {
  it('pairs slice k with slice k, so that a burst on one slice of A does not move the ratio', () => {
    // Round 4 of run 0 was slowed for A alone (a burst of load from elsewhere).
    const result = target([record(0, 'lib-multi@ioredis', [100, 100, 100, 10]), record(0, 'floor-multi@ioredis', [100, 100, 100, 100])]);
    expect(result).to.include({ ratio: 1, pairs: 4, result: 'pass' });
  });

  it('pools the pairs of every run, and spreads the per-run medians', () => {
    const result = target([
      record(0, 'lib-multi@ioredis', [90, 90, 90]),
      record(0, 'floor-multi@ioredis', [100, 100, 100]),
      record(1, 'lib-multi@ioredis', [100, 100, 120]),
      record(1, 'floor-multi@ioredis', [100, 100, 100]),
    ]);
    // Pairs: 0.9, 0.9, 0.9, 1.0, 1.0, 1.2: the median of six is the mean of the middle two.
    expect(result?.ratio).to.be.closeTo(0.95, 1e-9);
    expect(result?.pairs).to.equal(6);
    expect(result?.spread?.[0]).to.be.closeTo(0.9, 1e-9);
    expect(result?.spread?.[1]).to.be.closeTo(1, 1e-9);
  });

  it('skips a run where either side failed, and misses rather than passes on nothing', () => {
    const failed = target([{ run: 0, scenario: 'many-c64', contender: 'lib-multi@ioredis', error: 'boom' }, record(0, 'floor-multi@ioredis', [100, 100])]);
    expect(failed?.ratio).to.be.NaN;
    expect(failed?.result).to.equal('MISS');
    expect(target([])).to.equal(undefined);
  });

  it('divides footprint entries, and judges info rows as yes / no', () => {
    const rows = evaluateTargets({
      throughput: [],
      footprint: { 'lib-multi@ioredis bytes@10000': 120, 'lib-multi@ioredis bytes@10': 100, 'lib-multi@ioredis flood members': 10 },
    });
    expect(rows.find((t) => t.a === 'lib-multi@ioredis bytes@10000')).to.include({ ratio: 1.2, result: 'pass' });
    expect(rows.find((t) => t.a === 'lib-multi@ioredis flood members')).to.include({ b: '11', result: 'yes' });
  });
});
