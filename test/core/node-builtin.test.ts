import { expect } from 'chai';
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { withBuiltinOf, type BuiltinHost } from '../../src/core/node-builtin.js';

/** What `withBuiltinOf` handed over: at once (`sync`), later (`async`, after a dynamic import), or nothing. */
async function handed(host: BuiltinHost | undefined, id = 'node:diagnostics_channel'): Promise<{ sync: unknown[]; async: unknown[] }> {
  const received: unknown[] = [];
  withBuiltinOf(host, id, (module: unknown) => received.push(module));
  const sync = [...received];
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { sync, async: received.slice(sync.length) };
}

describe('withNodeBuiltin (withBuiltinOf, with the process given)', () => {
  it('hands over the module at once where process.getBuiltinModule exists (Node 20.16+)', async () => {
    expect(await handed(process)).to.deep.equal({ sync: [process.getBuiltinModule('node:diagnostics_channel')], async: [] });
  });

  it('hands over nothing where getBuiltinModule has no such module', async () => {
    expect(await handed(process, 'node:no-such-module')).to.deep.equal({ sync: [], async: [] });
    expect(await handed({ getBuiltinModule: () => undefined })).to.deep.equal({ sync: [], async: [] });
  });

  it('imports the module on a Node without getBuiltinModule (before 20.16), a few ticks later', async () => {
    const { sync, async } = await handed({ versions: { node: '20.15.0' } });
    expect(sync).to.deep.equal([]);
    expect(async).to.have.length(1);
    expect((async[0] as typeof diagnosticsChannel).channel).to.equal(diagnosticsChannel.channel);
  });

  it('hands over nothing, and rejects nothing, where an old Node’s import fails', async () => {
    expect(await handed({ versions: { node: '20.15.0' } }, 'node:no-such-module')).to.deep.equal({ sync: [], async: [] });
  });

  it('hands over nothing without a process (Cloudflare Workers without nodejs_compat), or with one that is not Node’s (an edge runtime)', async () => {
    expect(await handed(undefined)).to.deep.equal({ sync: [], async: [] });
    expect(await handed({})).to.deep.equal({ sync: [], async: [] });
  });
});
