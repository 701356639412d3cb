// A minimal Redis PING over a raw TCP socket (RESP), with no Redis client
// library, so the test harness can tell when a server it started is ready
// (or, for fault-injection tests, that a paused server does not answer).

import { connect } from 'node:net';

/** `PING` encoded as a RESP array of one bulk string. */
const PING_COMMAND = '*1\r\n$4\r\nPING\r\n';

/**
 * Sends one PING to host:port and resolves with the first reply line
 * (`+PONG` from a ready server; `-LOADING ...` or `-NOAUTH ...` otherwise).
 * Rejects if the connection fails or no full line arrives within `timeoutMs`.
 */
export function sendPing(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let received = '';
    const finish = (outcome: () => void): void => {
      clearTimeout(timer);
      socket.destroy();
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`no PING reply from ${host}:${port} within ${timeoutMs} ms`))), timeoutMs);
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(PING_COMMAND));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const lineEnd = received.indexOf('\r\n');
      if (lineEnd >= 0) finish(() => resolve(received.slice(0, lineEnd)));
    });
    socket.once('error', (error) => finish(() => reject(error)));
    socket.once('close', () => finish(() => reject(new Error(`${host}:${port} closed the connection before replying to PING`))));
  });
}

/** True if host:port answers PING with `+PONG` within `timeoutMs`; false on any other outcome. */
export async function answersPing(host: string, port: number, timeoutMs: number): Promise<boolean> {
  try {
    return (await sendPing(host, port, timeoutMs)) === '+PONG';
  } catch {
    return false;
  }
}
