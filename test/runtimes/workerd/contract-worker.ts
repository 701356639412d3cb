// A module Worker that runs the contract inside workerd (test/runtimes/workerd.test.ts
// bundles it): POST a WebContractConfig as JSON, get the WebContractResult back.
// @upstash/redis as a Worker imports it, from its `cloudflare` entry.

import { Redis } from '@upstash/redis/cloudflare';
import { runContract, type WebContractConfig } from '../web/contract.js';

export default {
  async fetch(request: Request): Promise<Response> {
    const config = (await request.json()) as WebContractConfig;
    return Response.json(await runContract(config, Redis));
  },
};
