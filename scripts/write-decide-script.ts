// Writes src/redis/decide/decide-script.ts, the decide script as Redis is sent it: the commented source
// (decide-lua.ts) without its comment lines and indentation (leanLua), and its SHA1. Run after every change to the
// source (`npm run build:lua`); test/architecture/decide-contract.test.ts fails until it is.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DECIDE_LUA } from '../src/redis/decide/decide-lua.js';
import { leanLua } from '../src/redis/scripts/lean-lua.js';

/** The text of decide-script.ts for the script `sent`. */
export function decideScriptModule(sent: string): string {
  const sha1 = createHash('sha1').update(sent).digest('hex');
  return `// Written by \`npm run build:lua\` from decide-lua.ts (the commented source, which says what every line does): edit
// that file, then run it. What Redis runs: the source without its comment lines and indentation (leanLua).
import { defineScript } from '../scripts/redis-script.js';

/** The decide script as Redis is sent it (docs/architecture.md, "The decide script"), and its SHA1. */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  ${JSON.stringify(sent)},
  '${sha1}',
);
`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  writeFileSync(new URL('../src/redis/decide/decide-script.ts', import.meta.url), decideScriptModule(leanLua(DECIDE_LUA)));
  console.log('wrote src/redis/decide/decide-script.ts');
}
