import { expect } from 'chai';
import { withBuiltinOf, type BuiltinHost } from '../../src/core/node-builtin.js';

/** What `withBuiltinOf` handed over: at once (`sync`), later (`async`), or nothing. */
async function handed(host: BuiltinHost | undefined, id = 'node:diagnostics_channel'): Promise<{ sync: unknown[]; async: unknown[] }> {
  const received: unknown[] = [];
  withBuiltinOf(host, id, (module: unknown) => received.push(module));
  const sync = [...received];
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { sync, async: received.slice(sync.length) };
}

/** Next.js's edge runtime's `process`: what it does not have is a function that throws when called. */
const NEXT_EDGE_ERROR = 'A Node.js API is used (process.getBuiltinModule) which is not supported in the Edge Runtime.';

describe('withNodeBuiltin (withBuiltinOf, with the process given)', () => {
  it('hands over the module at once where process.getBuiltinModule exists (Node 20.16+)', async () => {
    expect(await handed(process)).to.deep.equal({ sync: [process.getBuiltinModule('node:diagnostics_channel')], async: [] });
  });

  it('hands over nothing where getBuiltinModule has no such module', async () => {
    expect(await handed(process, 'node:no-such-module')).to.deep.equal({ sync: [], async: [] });
    expect(await handed({ getBuiltinModule: () => undefined })).to.deep.equal({ sync: [], async: [] });
  });

  it('hands over nothing, and imports nothing, on a Node without getBuiltinModule (before 20.16)', async () => {
    expect(await handed({ versions: { node: '20.15.0' } } as BuiltinHost)).to.deep.equal({ sync: [], async: [] });
  });

  it('hands over nothing, and throws nothing, where getBuiltinModule throws (Next.js’s edge runtime), or reading it does', async () => {
    const throwing = {
      getBuiltinModule: () => {
        throw new Error(NEXT_EDGE_ERROR);
      },
    };
    expect(await handed(throwing)).to.deep.equal({ sync: [], async: [] });
    const throwingGetter = Object.defineProperty({}, 'getBuiltinModule', {
      get() {
        throw new Error(NEXT_EDGE_ERROR);
      },
    }) as BuiltinHost;
    expect(await handed(throwingGetter)).to.deep.equal({ sync: [], async: [] });
  });

  it('calls getBuiltinModule on the process (as a method)', async () => {
    const host = {
      modules: { 'node:events': { errorMonitor: Symbol('errorMonitor') } } as Record<string, unknown>,
      getBuiltinModule(this: { modules: Record<string, unknown> }, id: string): unknown {
        return this.modules[id];
      },
    };
    expect(await handed(host, 'node:events')).to.deep.equal({ sync: [host.modules['node:events']], async: [] });
  });

  it('throws nothing where using the module throws (a stand-in that is not Node’s)', () => {
    expect(() =>
      withBuiltinOf({ getBuiltinModule: () => ({}) }, 'node:diagnostics_channel', (module: { channel(name: string): unknown }) => module.channel('x')),
    ).not.to.throw();
  });

  it('hands over nothing without a process (Cloudflare Workers without nodejs_compat), or with one that is not Node’s (an edge runtime)', async () => {
    expect(await handed(undefined)).to.deep.equal({ sync: [], async: [] });
    expect(await handed({})).to.deep.equal({ sync: [], async: [] });
  });
});
