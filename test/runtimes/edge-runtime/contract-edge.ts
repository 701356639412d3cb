// The contract inside Vercel's edge runtime (test/runtimes/edge-runtime.test.ts
// bundles this as a script): a fetch handler, as the runtime dispatches
// requests to it; POST a WebContractConfig as JSON, get the WebContractResult
// back. @upstash/redis from its main entry, as Next.js bundles it for the edge.

import { Redis } from '@upstash/redis';
import { runContract, type WebContractConfig } from '../web/contract.js';

interface FetchEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}

const scope = globalThis as unknown as { addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void };
scope.addEventListener('fetch', (event) => {
  event.respondWith(
    (async () => {
      const config = (await event.request.json()) as WebContractConfig;
      return Response.json(await runContract(config, Redis));
    })(),
  );
});
