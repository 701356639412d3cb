/** How many calls of `command` an `INFO commandstats` reply counts (0 when it has none). */
export function commandCalls(commandstats: string, command: string): number {
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(commandstats)?.[1] ?? 0);
}
