// A node-redis cluster client waits forever on a master that died
// (docs/guides/redis-cluster.md, "When a master fails"). The stall watch has
// its slot map refreshed through a live master when a call has waited more
// than STALL_MS, and again every RESCUE_INTERVAL_MS while calls stall.

/** A call unanswered for this long means its master may be gone: time to check the slot map. */
const STALL_MS = 1_000;
/** At most one check of the slot map per this many ms while calls stall. */
const RESCUE_INTERVAL_MS = 300;
/** A call unanswered for this long is no longer watched (its caller timed out long ago). */
const FORGET_MS = 60_000;

/** The calls of one cluster client not answered yet, and the one watchdog (the adapter's) that runs while any of them stalls. */
export class StallWatch {
  /** Calls not answered yet (when each started, and its key), oldest first. */
  readonly #pending = new Set<{ readonly startedAt: number; readonly key: string }>();
  readonly #rescue: (stuckKey: string) => Promise<void>;
  #lastRescueAt = Number.NEGATIVE_INFINITY;
  /** Runs while calls stall (unreferenced: it never keeps a process alive). */
  #watchdog: ReturnType<typeof setInterval> | undefined;

  /** `rescue` makes the client re-read its slot map for a stuck call's key; its failure changes nothing. */
  constructor(rescue: (stuckKey: string) => Promise<void>) {
    this.#rescue = rescue;
  }

  /** Keeps `call` among the pending calls until it settles, after checking whether the oldest one stalls. */
  watch<T>(key: string, call: Promise<T>): Promise<T> {
    const now = performance.now();
    this.#checkForStall(now);
    const entry = { startedAt: now, key };
    this.#pending.add(entry);
    return call.finally(() => this.#pending.delete(entry));
  }

  /**
   * Rescues the oldest call's key when that call stalls, and keeps checking
   * until none does, even while no new call comes (an open circuit lets one
   * through a second). Calls unanswered for FORGET_MS are forgotten.
   */
  #checkForStall(now = performance.now()): void {
    let oldest;
    for (const call of this.#pending) {
      if (now - call.startedAt <= FORGET_MS) {
        oldest = call;
        break;
      }
      this.#pending.delete(call);
    }
    if (oldest === undefined || now - oldest.startedAt <= STALL_MS) {
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
      return;
    }
    if (now - this.#lastRescueAt >= RESCUE_INTERVAL_MS) {
      this.#lastRescueAt = now;
      this.#rescue(oldest.key).catch(() => undefined); // best effort: a failed rescue changes nothing
    }
    this.#watchdog ??= setInterval(() => this.#checkForStall(), RESCUE_INTERVAL_MS).unref();
  }
}
