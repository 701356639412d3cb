// The server side of the clock the two-process tests set
// (test/http/hono/server-processes.ts, `setClock`): each `now <microseconds>`
// line on stdin sets the server's clock and is answered `ok`; the end of
// stdin asks the server to stop. Imports nothing of src/, so that a server
// run under Bun with the installed package can use it too.

import { createInterface } from 'node:readline';

/** Follows the parent's clock lines on stdin, calling `setNow` with each time, and `stop` when stdin ends. */
export function followClockCommands(setNow: (microseconds: number) => void, stop: () => void): void {
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => {
    const [command, value] = line.split(' ');
    if (command === 'now') {
      setNow(Number(value));
      console.log('ok');
    }
  });
  input.on('close', stop);
}
