// The `circuitBreaker` option of a limiter or a stack; the breaker itself is in resilience/.

import { duration, integer, MAX_INTEGER, normalize, optional, renamed } from '../core/check.js';
import type { Duration } from '../core/check.js';
import { DEFAULT_CIRCUIT_BREAKER, type NormalizedCircuitBreakerOptions } from '../resilience/circuit-breaker.js';
import { ownOptions } from './own-options.js';

/** The `circuitBreaker` option: how many failures open the circuit, and for how long. */
export interface CircuitBreakerOptions {
  /**
   * Consecutive store failures (errors or timeouts) that open the circuit.
   * An integer from 1 to 2^31 - 1.
   * @default 5
   */
  readonly failureThreshold?: number;
  /**
   * How long an open circuit decides every call without the store before one
   * call probes it again: milliseconds (an integer from 1 to 2^31 - 1) or a
   * {@link Duration} string (`'500ms'`, `'2s'`).
   * @default 1000
   */
  readonly cooldown?: Duration;
  /**
   * The former name of `cooldown`, still accepted (also as a {@link Duration}).
   * @deprecated Use `cooldown`.
   */
  readonly cooldownMs?: Duration;
}

const BREAKER_SCHEMA = {
  failureThreshold: optional(integer(1, MAX_INTEGER), DEFAULT_CIRCUIT_BREAKER.failureThreshold),
  cooldown: optional(duration(1, MAX_INTEGER), undefined),
  cooldownMs: optional(duration(1, MAX_INTEGER), undefined),
};

/**
 * Checks a `circuitBreaker` option without touching the caller's object:
 * `undefined` gives the defaults (5 failures, 1 s), `false` turns the
 * breaker off, an object fills in the fields it leaves out (its own fields
 * only: an inherited one is ignored). Messages name the field, e.g.
 * `circuitBreaker.failureThreshold`.
 */
export function circuitBreakerOption(value: unknown, name = 'circuitBreaker'): NormalizedCircuitBreakerOptions | false {
  if (value === undefined) return DEFAULT_CIRCUIT_BREAKER;
  if (value === false) return false;
  const { failureThreshold, cooldown, cooldownMs } = normalize(ownOptions(value), BREAKER_SCHEMA, `\`${name}\``, {
    prefix: `${name}.`,
    expected: `\`${name}\` to be an object ({ failureThreshold?, cooldown? }) or false`,
  });
  const given = renamed(cooldown, cooldownMs, `${name}.cooldown`, `${name}.cooldownMs`);
  return Object.freeze({ failureThreshold, cooldownMs: given ?? DEFAULT_CIRCUIT_BREAKER.cooldownMs });
}
