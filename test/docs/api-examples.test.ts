// The `@example` blocks of the TSDoc comments in src/, which the API site
// (typedoc) shows, type-check as a user's project with `strict` compiles them
// against the package's types (its names mapped to src/ as package.json's
// `exports` names them): each block is written to a file of its own, its
// imports kept at the top and the rest inside an async function (so that an
// excerpt may `await` and `return`), unless it exports something.
//
// An example is an excerpt: it may use, without importing them, what the
// package exports (from the entry of its own source file first, then the main
// entry), the framework names of FRAMEWORK_NAMES, and the variables of
// CONTEXT, typed there as a reader takes them (`redis` an ioredis client,
// `userId` a string). Anything else it uses, it declares or imports.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(REPO, 'src');

/** Names of the frameworks' own APIs an excerpt may use without importing them, and where they come from. */
const FRAMEWORK_NAMES: Readonly<Record<string, string>> = {
  Controller: '@nestjs/common',
  Module: '@nestjs/common',
  Post: '@nestjs/common',
  UseGuards: '@nestjs/common',
  APP_GUARD: '@nestjs/core',
  ThrottlerModule: '@nestjs/throttler',
};

/** The variables an excerpt may use without declaring them, as a reader of the API site takes them. */
const CONTEXT = `import type { Express } from 'express';
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

declare global {
  /** An ioredis client. */
  const redis: Redis;
  /** A limiter of actions, and one of cost (a budget of tokens). */
  const limiter: RollingRateLimiter;
  const tokens: RollingRateLimiter;
  /** A stack, such as an API's limits per second and per minute. */
  const api: RateLimiterStack;
  const userId: string;
  const teacherId: string;
  const requestId: string;
  const prompt: string;
  const promptTokens: number;
  const maxOutputTokens: number;
  /** A JSON document read from a file. */
  const text: string;
  /** A configuration read from a file, with a list of routes. */
  const config: { routes: { limits: unknown[] }[] };
  const app: Express;
  const response: ServerResponse;
  function sendPushNotification(userId: string): Promise<void>;
  function callModel(prompt: string): Promise<{ usage: { totalTokens: number } }>;
  /** The tokens of a request's prompt, as a tokenizer counts them. */
  function countTokens(body: unknown): number;
}
export {};
`;

/** One `@example` block of a TSDoc comment in src/. */
interface ApiExample {
  /** The source file, relative to the repository. */
  readonly file: string;
  /** The line of the block's first line of code in the source file. */
  readonly line: number;
  readonly code: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : /\.[cm]?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every fenced code block that follows an `@example` tag, in every TSDoc comment of src/. */
function apiExamples(): ApiExample[] {
  const examples: ApiExample[] = [];
  for (const path of sourceFiles(SRC)) {
    const lines = readFileSync(path, 'utf8').split('\n');
    let inExample = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (/^\s*\*\//.test(line) || /^\s*\/\*\*/.test(line)) inExample = false; // a comment ends, or another begins
      if (/^\s*\*\s*@example\b/.test(line)) inExample = true;
      else if (/^\s*\*\s*@\w+/.test(line)) inExample = false;
      if (!inExample || !/^\s*\*\s*```/.test(line)) continue;
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*\*\s*```/.test(lines[i] ?? ''); i++) body.push((lines[i] ?? '').replace(/^\s*\* ?/, ''));
      examples.push({ file: relative(REPO, path), line: i - body.length + 1, code: body.join('\n') });
    }
  }
  return examples;
}

/** The package's entries as package.json's `exports` names them, each with its source file. */
function packageEntries(): { name: string; source: string }[] {
  const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    const types = (target as { import?: { types?: string } }).import?.types;
    if (types === undefined) return [];
    const source = types.replace(/^\.\/dist\/esm\//, 'src/').replace(/\.d\.ts$/, '.ts');
    return [{ name: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`, source }];
  });
}

/** The names each entry exports (values and types), read by the compiler. */
function exportedNames(entries: readonly { name: string; source: string }[]): Map<string, string[]> {
  const program = ts.createProgram(
    entries.map((entry) => join(REPO, entry.source)),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, experimentalDecorators: true, noEmit: true, skipLibCheck: true },
  );
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(join(REPO, entry.source));
    const symbol = file === undefined ? undefined : checker.getSymbolAtLocation(file);
    names.set(entry.name, symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((exported) => exported.name));
  }
  return names;
}

/** The names an example binds itself: what it imports and declares (roughly: enough to skip an auto-import). */
function boundNames(code: string): Set<string> {
  const bound = new Set<string>();
  for (const match of code.matchAll(/^import\s+(?:type\s+)?([\s\S]*?)\s+from\s+'[^']+';?$/gm)) {
    for (const name of (match[1] ?? '').replace(/[{}]/g, ',').split(',')) {
      const local = name
        .trim()
        .split(/\s+as\s+/)
        .pop()
        ?.replace(/^type\s+/, '')
        .trim();
      if (local) bound.add(local);
    }
  }
  for (const match of code.matchAll(/\b(?:const|let|var|function|class)\s+([A-Za-z_$][\w$]*)/g)) bound.add(match[1] ?? '');
  return bound;
}

/**
 * The file an example is compiled as: the imports it needs and does not write (the package's names, from the entry
 * its source file belongs to first, and the frameworks'), its own imports, then the rest, inside an async function
 * unless it exports something.
 */
function exampleModule(example: ApiExample, entries: readonly { name: string; source: string }[], names: Map<string, string[]>): string {
  const lines = example.code.split('\n');
  const imports = lines.filter((line) => /^import\s/.test(line));
  const rest = lines.filter((line) => !/^import\s/.test(line)).join('\n');
  const bound = boundNames(example.code);
  const used = new Set(rest.match(/[A-Za-z_$][\w$]*/g) ?? []);
  // The entry whose source is nearest to the example's file comes first, then the others (the main entry among them).
  const nearness = (source: string): number => (example.file.startsWith(dirname(source)) ? dirname(source).length : 0);
  const ordered = [...entries].sort((a, b) => nearness(b.source) - nearness(a.source));
  const added = new Map<string, string[]>();
  for (const name of used) {
    if (bound.has(name)) continue;
    const from = FRAMEWORK_NAMES[name] ?? ordered.find((entry) => names.get(entry.name)?.includes(name))?.name;
    if (from === undefined) continue;
    added.set(from, [...(added.get(from) ?? []), name]);
  }
  const autoImports = [...added].map(([from, list]) => `import { ${list.join(', ')} } from '${from}';`);
  const exports = /^export\s/m.test(rest);
  const body = exports ? rest : `export async function example(): Promise<void> {\n${rest}\n}`;
  return [...autoImports, ...imports, body, ''].join('\n');
}

describe('the @example blocks of the API reference', function () {
  this.timeout(120_000);
  let directory = '';

  before(() => {
    // Inside node_modules/.cache, so that the frameworks and clients the examples import resolve from this repository.
    const cache = join(REPO, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    directory = mkdtempSync(join(cache, 'rwl-api-examples-'));
  });

  after(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('are found: every source file that shows one', () => {
    const files = new Set(apiExamples().map((example) => example.file));
    expect(files).to.include.members(['src/limiters/rolling-rate-limiter.ts', 'src/options/limiter-rules.ts', 'src/http/express/express-middleware.ts']);
  });

  it('type-check with `strict` against the package’s types', () => {
    const entries = packageEntries();
    const names = exportedNames(entries);
    const examples = apiExamples();
    const files = examples.map((example, i) => {
      const file = join(directory, `${i}-${example.file.replace(/^src\//, '').replace(/[/.]/g, '-')}.ts`);
      writeFileSync(file, exampleModule(example, entries, names));
      return file;
    });
    writeFileSync(join(directory, 'context.d.ts'), CONTEXT);
    writeFileSync(join(directory, 'package.json'), JSON.stringify({ type: 'module' }));
    const paths = Object.fromEntries(entries.map((entry) => [entry.name, [join(REPO, entry.source)]]));
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          experimentalDecorators: true,
          types: ['node'],
          skipLibCheck: true,
          noEmit: true,
          paths,
        },
        files: ['context.d.ts', ...files.map((file) => relative(directory, file))],
      }),
    );
    const config = ts.getParsedCommandLineOfConfigFile(join(directory, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    if (config === undefined) throw new Error('the tsconfig.json of the examples does not parse');
    const program = ts.createProgram(config.fileNames, config.options);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file === undefined || diagnostic.file.fileName.startsWith(directory))
      .map((diagnostic) => {
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
        const index = diagnostic.file === undefined ? -1 : files.indexOf(diagnostic.file.fileName);
        const example = examples[index];
        if (example === undefined || diagnostic.file === undefined || diagnostic.start === undefined) return `${diagnostic.file?.fileName ?? ''}: ${message}`;
        const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        const text = diagnostic.file.text.split('\n')[line]?.trim() ?? '';
        return `${example.file} (@example from line ${example.line}): ${message}\n    at \`${text}\``;
      });
    expect(problems, `\n${problems.join('\n')}\n`).to.deep.equal([]);
  });
});
