import type { Redis } from 'ioredis';

/** How many calls of `command` an `INFO commandstats` reply counts (0 when it has none). */
export function commandCalls(commandstats: string, command: string): number {
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(commandstats)?.[1] ?? 0);
}

/** Runs `body` and counts the EVALSHA, EVAL and MULTI commands Redis served meanwhile (it resets the server's command stats). */
export async function commandsDuring(client: Redis, body: () => Promise<void>): Promise<{ evalsha: number; eval: number; multi: number }> {
  await client.config('RESETSTAT');
  await body();
  const stats = await client.info('commandstats');
  return { evalsha: commandCalls(stats, 'evalsha'), eval: commandCalls(stats, 'eval'), multi: commandCalls(stats, 'multi') };
}
