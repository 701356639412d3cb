// The Hono snippet of docs/guides/http-frameworks.md is the code of examples/hono-api.ts (which
// `npm run examples` runs with --self-test): the same lines down to the
// server, with the package's name where the example imports the source, and
// a plain `serve` where the example adds its self-test.

import { readFileSync } from 'node:fs';
import { expect } from 'chai';

const read = (file: string): string => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

/** The first TypeScript block after the guide's `rolling-window-limiter/hono` heading. */
function readmeSnippet(): string {
  const after = read('docs/guides/http-frameworks.md').split('**`rolling-window-limiter/hono`**')[1] ?? '';
  const code = /```ts\n([\s\S]*?)```/.exec(after)?.[1];
  if (code === undefined) throw new Error('no code block after **`rolling-window-limiter/hono`** in docs/guides/http-frameworks.md');
  return code;
}

describe("the HTTP guide's Hono snippet", () => {
  it('is the code of examples/hono-api.ts, importing the package by name', () => {
    const example = read('examples/hono-api.ts');
    const body = example.slice(example.indexOf("import { serve } from '@hono/node-server';"), example.indexOf('const testing'));
    const expected = body
      .replace("'../src/index.js'", "'rolling-window-limiter'")
      .replace("'../src/http/hono/hono-middleware.js'", "'rolling-window-limiter/hono'")
      .concat('serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) });\n');
    expect(body, 'the example has the snippet').to.include('rateLimit({ limiter, connInfo: getConnInfo })');
    expect(readmeSnippet()).to.equal(expected);
  });
});
