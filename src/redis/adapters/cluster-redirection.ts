// Redis Cluster's answers that mean "not run here, try again": the slot is
// served by another node (MOVED), is being imported by another node and this
// key is already there (ASK), is being migrated with this command's keys split
// between two nodes (TRYAGAIN), or the cluster cannot serve it right now
// (CLUSTERDOWN, e.g. during a failover). EXECABORT is what EXEC answers when a
// command of the MULTI was refused when queued, which for the limiter's own
// well-formed commands means one of the above (node-redis 4 reports only it).
// In every case Redis ran nothing, so sending the call again cannot record an
// attempt twice.

/** What a refusal says: where to go (`moved`, `ask`), or only to try again (`retry`). */
export type Redirection =
  | { readonly kind: 'moved' | 'ask'; readonly address: string }
  | { readonly kind: 'retry'; readonly address?: undefined };

/** The redirection an error is, or undefined for any other error. */
export function redirectionOf(error: unknown): Redirection | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  if (message.startsWith('MOVED ') || message.startsWith('ASK ')) {
    return { kind: message.startsWith('ASK') ? 'ask' : 'moved', address: message.slice(message.lastIndexOf(' ') + 1) };
  }
  if (message.startsWith('TRYAGAIN') || message.startsWith('CLUSTERDOWN') || message.startsWith('EXECABORT')) return { kind: 'retry' };
  return undefined;
}

/**
 * The pause before the `retry`-th try (from 1): none before the first try
 * after MOVED or ASK, which say where to go; otherwise 5 ms, doubling, at most
 * 200 ms (eight tries wait about 0.7 s in all, well within the default timeout).
 */
export function retryPauseMs(retry: number, redirection: Redirection): number {
  if (retry === 1 && redirection.kind !== 'retry') return 0;
  return Math.min(200, 5 * 2 ** (retry - 1));
}
