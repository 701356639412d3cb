// The walls of src/, checked from the imports themselves (resolved by the
// TypeScript compiler, as the build resolves them): no import circle, and the
// layer rule of eslint.config.js catches an import that runs up a floor.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';
import ts from 'typescript';
import tseslint from 'typescript-eslint';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every file of src/ and the files of src/ it imports (value and type imports alike). */
function importGraph(): Map<string, string[]> {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((imported) => ts.resolveModuleName(imported.fileName, file, options, ts.sys).resolvedModule?.resolvedFileName)
      .filter((target): target is string => target !== undefined && target.startsWith(SRC) && !target.includes('node_modules'));
    graph.set(file, targets);
  }
  return graph;
}

/** The import circles of `graph`, each as the files around it. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'visiting');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'visiting') found.push(path.slice(path.indexOf(next)).map((f) => relative(SRC, f)));
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  return found;
}

describe('the layers of src/', () => {
  it('has no import circle', () => {
    const graph = importGraph();
    expect(graph.size).to.be.above(40);
    expect(circles(graph)).to.deep.equal([]);
  });

  it('fails lint on an import that runs up a floor, and passes the same import from the floor above', async () => {
    // Without type information: the probe is not a file of the project (the layer rule reads only the import).
    const eslint = new ESLint({ cwd: ROOT, overrideConfig: tseslint.configs.disableTypeChecked });
    const wrong = "import { RedisStore } from '../redis/redis-store.js';\nexport const store = RedisStore;\n";
    const [inCore] = await eslint.lintText(wrong, { filePath: join(SRC, 'core', 'layer-probe.ts') });
    expect(inCore?.messages.map((message) => message.ruleId)).to.include('@typescript-eslint/no-restricted-imports');
    const [inOptions] = await eslint.lintText(wrong, { filePath: join(SRC, 'options', 'layer-probe.ts') });
    expect(inOptions?.messages.filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports')).to.deep.equal([]);
    // http sits below integrations: the NestJS entry may import the middleware's parts, never the other way.
    const up = "import { RollingWindowGuard } from '../integrations/nestjs/rolling-window-guard.js';\nexport const guard = RollingWindowGuard;\n";
    const [inHttp] = await eslint.lintText(up, { filePath: join(SRC, 'http', 'layer-probe.ts') });
    expect(inHttp?.messages.map((message) => message.ruleId)).to.include('@typescript-eslint/no-restricted-imports');
  });

  it('keeps Nest out of the main entry: it reaches no file of src/integrations/, and only those import @nestjs', () => {
    const graph = importGraph();
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file) ?? []) visit(next);
    };
    visit(join(SRC, 'index.ts'));
    expect([...reached].filter((file) => file.startsWith(join(SRC, 'integrations')))).to.deep.equal([]);
    const importsNest = [...graph.keys()].filter((file) =>
      ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.some((imported) => imported.fileName.startsWith('@nestjs/')),
    );
    expect(importsNest.map((file) => relative(SRC, file)).filter((file) => !file.startsWith('integrations'))).to.deep.equal([]);
    expect(importsNest, 'the NestJS entry imports Nest').to.not.be.empty;
  });
});
