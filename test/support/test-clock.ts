/** A hand-driven microsecond clock for limiters under test: nothing sleeps. */
export class TestClock {
  /** Current time, integer microseconds since the epoch. */
  now: number;

  constructor(startMicroseconds = Date.UTC(2026, 0, 1) * 1000) {
    this.now = startMicroseconds;
  }

  /** The function to pass as the limiter's `clock` option. */
  readonly read = (): number => this.now;

  advanceMs(ms: number): void {
    this.now += ms * 1000;
  }

  advanceUs(us: number): void {
    this.now += us;
  }
}
