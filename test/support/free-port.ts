// Finds a TCP port on 127.0.0.1 that is free right now, for test servers.
// The port is only free at the moment we close our probe, so callers that
// bind it later must retry if someone else took it meanwhile.

import { createServer, type AddressInfo } from 'node:net';

/** The loopback address every test server binds to. */
export const LOOPBACK_HOST = '127.0.0.1';

/**
 * Asks the kernel for a free port by listening on 127.0.0.1 port 0, reads the
 * port it picked, and closes the probe.
 */
export async function findFreeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, LOOPBACK_HOST, () => resolve());
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
