// Redis Cluster's answers that mean "not run here, try again" (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN; and EXECABORT, which is what EXEC answers when a
// command of the MULTI met one of them when queued, and all node-redis 4
// reports). Redis ran nothing, so sending the call again cannot record an
// attempt twice (docs/guides/redis-cluster.md, "Resharding").

/**
 * What a refusal says: where to go (`moved`, `ask`), to try again soon
 * (`retry`), or to wait for the cluster (`down`: CLUSTERDOWN, which every
 * master answers from the moment the cluster marks a master failed until its
 * replica is promoted, typically under a second).
 */
export type Redirection = { readonly kind: 'moved' | 'ask'; readonly address: string } | { readonly kind: 'retry' | 'down'; readonly address?: undefined };

/** The redirection an error is, or undefined for any other error. */
export function redirectionOf(error: unknown): Redirection | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  if (message.startsWith('MOVED ') || message.startsWith('ASK ')) {
    return { kind: message.startsWith('ASK') ? 'ask' : 'moved', address: message.slice(message.lastIndexOf(' ') + 1) };
  }
  if (message.startsWith('CLUSTERDOWN')) return { kind: 'down' };
  if (message.startsWith('TRYAGAIN') || message.startsWith('EXECABORT')) return { kind: 'retry' };
  return undefined;
}

/** Tries after a refusal: eight (about 0.7 s of pauses), or twenty for CLUSTERDOWN (2 s: a failover's election). */
export function maxRetries(redirection: Redirection): number {
  return redirection.kind === 'down' ? 20 : 8;
}

/**
 * The pause before the `retry`-th try (from 1): none before the first try
 * after MOVED or ASK, which say where to go; 100 ms each while the cluster is
 * down (as ioredis waits); otherwise 5 ms, doubling, at most 200 ms.
 */
export function retryPauseMs(retry: number, redirection: Redirection): number {
  if (redirection.kind === 'down') return 100;
  if (retry === 1 && redirection.kind !== 'retry') return 0;
  return Math.min(200, 5 * 2 ** (retry - 1));
}

/**
 * Makes a call refused with `error` again by `retry` (given the redirection
 * and the refusal), for as long as it is refused, within {@link maxRetries}
 * and {@link retryPauseMs}; any other error is thrown as it is.
 */
export async function retryRedirected<T>(error: unknown, retry: (redirection: Redirection, refusal: unknown) => Promise<T>): Promise<T> {
  let last = error;
  for (let tries = 1; ; tries++) {
    const redirection = redirectionOf(last);
    if (redirection === undefined || tries > maxRetries(redirection)) throw last;
    const pauseMs = retryPauseMs(tries, redirection);
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
    try {
      return await retry(redirection, last);
    } catch (next) {
      last = next;
    }
  }
}

/** ioredis's (and iovalkey's) wording when it gives up following a call's redirections, before the last answer. */
const GAVE_UP = /^Too many Cluster redirections\. Last error: (?:\w*Error: )?/;

/**
 * The answer of a Cluster whose slot is on the move, which a client gave up on
 * or does not follow: MOVED, ASK or TRYAGAIN, also as the last answer of
 * ioredis's `Too many Cluster redirections`. Undefined for any other error,
 * CLUSTERDOWN among them (a master failing, not a slot moving: it counts
 * against the breaker as a failure of the store).
 */
export function slotMoveOf(error: unknown): Redirection | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = error.message.replace(GAVE_UP, '');
  if (message.startsWith('TRYAGAIN')) return { kind: 'retry' };
  if (message.startsWith('MOVED ') || message.startsWith('ASK ')) return redirectionOf(new Error(message));
  return undefined;
}

/**
 * The pause before the `retry`-th new call (from 1) of a call refused because
 * its slot moves, made through the client again (which follows the slot):
 * none after MOVED, which the client follows to the new master, otherwise 10
 * ms, doubling, at most 100 ms; undefined when `error` says no slot moves.
 */
export function pauseAfterSlotMove(error: unknown, retry: number): number | undefined {
  const move = slotMoveOf(error);
  if (move === undefined) return undefined;
  return move.kind === 'moved' && retry === 1 ? 0 : Math.min(100, 10 * 2 ** (retry - 1));
}
