// A module of src/ imported anew, with module state of its own (tsx keeps
// `?fresh=N` apart), optionally while the runtime has no Node built-ins, to
// see what a module does at import and where Node's modules are missing.

import sinon from 'sinon';

let generation = 0;

/** Imports `url` as a new module (its own imports stay shared). */
export function freshImport<T>(url: URL): Promise<T> {
  generation += 1;
  return import(`${url.href}?fresh=${generation}`) as Promise<T>;
}

/** Imports `url` as a new module while `process.getBuiltinModule` finds nothing, as on a runtime without Node's modules. */
export async function freshImportWithoutNodeBuiltins<T>(url: URL): Promise<T> {
  const stub = sinon.stub(process, 'getBuiltinModule').returns(undefined);
  try {
    return await freshImport<T>(url);
  } finally {
    stub.restore();
  }
}
