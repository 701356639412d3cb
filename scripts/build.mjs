// Builds src/ twice, ES modules into dist/esm and CommonJS into dist/cjs (marked by its own package.json), each
// with its declarations, so that `import` and `require` both get native code and matching types.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
for (const project of ['tsconfig.esm.json', 'tsconfig.cjs.json']) execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' });
mkdirSync('dist/cjs', { recursive: true });
writeFileSync('dist/cjs/package.json', '{\n  "type": "commonjs"\n}\n');
console.log('built dist/esm (import) and dist/cjs (require)');
