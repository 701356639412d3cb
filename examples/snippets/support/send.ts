// Serves an Express app on a free loopback port for one request, and says what came back.
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export async function send(app: Express, method: string, path: string): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((listening) => server.once('listening', listening));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { method });
    return `${response.status} ${await response.text()}`;
  } finally {
    server.close();
  }
}
