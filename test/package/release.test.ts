// What a release publishes, checked by dry runs of what
// .github/workflows/release.yml runs (.ci/run runs this file on its own, as
// `npm run test:release`, and `npm test` runs it again):
//   - `npm pack --dry-run --json` (the list `npm publish` uploads, without
//     asking the registry: `npm publish --dry-run` refuses a version already
//     published, which package.json's is between releases; `prepack` builds
//     dist/) lists
//     exactly README.md, CHANGELOG.md, LICENSE, package.json, dist/cjs's
//     package.json and, for every file of src/, its ES module and CommonJS
//     builds with their declarations; no source map (src/ is not published:
//     a map would point nowhere), no test, nothing else; every file that
//     package.json names is among them;
//   - `deno publish --dry-run` of jsr.json, with the Deno binary of the `deno`
//     dev dependency, passes (type check, no slow types) and lists exactly
//     README.md, CHANGELOG.md, LICENSE, jsr.json and the files of src/ that its
//     entries import, directly or not;
//   - jsr.json carries package.json's version and exports the entries that run
//     under Deno (test/runtimes/deno.test.ts); the tag check of the release
//     workflow accepts `v<version>` alone.

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { cleanEnv, REPO } from '../support/packed-package.js';
import { runtimeBinary } from '../support/runtime-binary.js';

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(REPO, file), 'utf8')) as T;

interface Manifest {
  readonly version: string;
  readonly exports: Record<string, unknown>;
  readonly [field: string]: unknown;
}

interface JsrManifest {
  readonly name: string;
  readonly version: string;
  readonly exports: Record<string, string>;
}

/** Runs a command (killed past `timeoutMs`); resolves with its exit code, stdout and stderr. */
function execute(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: REPO, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The files of src/ (relative to it), the type declarations aside. */
function sourceFiles(): string[] {
  return readdirSync(join(REPO, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.[cm]?ts$/.test(file) && !/\.d\.[cm]?ts$/.test(file))
    .map((file) => file.split('\\').join('/'));
}

/** The files of src/ that `entries` import, directly or not, as TypeScript resolves them (type imports too). */
function reachedSources(entries: readonly string[]): string[] {
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const src = join(REPO, 'src');
  const seen = new Set<string>();
  const pending = entries.map((entry) => join(REPO, entry));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const target = ts.resolveModuleName(imported.fileName, file, options, ts.sys).resolvedModule?.resolvedFileName;
      if (target && !relative(src, target).startsWith('..') && !target.includes('node_modules')) pending.push(target);
    }
  }
  return [...seen].map((file) => relative(REPO, file).split('\\').join('/'));
}

describe('a release', function () {
  this.timeout(240_000);
  const manifest = readJson<Manifest>('package.json');
  const jsr = readJson<JsrManifest>('jsr.json');

  it('npm pack --dry-run lists README.md, CHANGELOG.md, LICENSE, package.json and the builds of every file of src/ (no map), and nothing else', async () => {
    const { code, stdout, stderr } = await execute(NPM, ['pack', '--dry-run', '--json'], cleanEnv(), 180_000);
    expect(code, `npm pack --dry-run failed:\n${stdout}\n${stderr}`).to.equal(0);
    // The JSON follows what `prepack` (the build) printed: it starts at the first line that is a lone `[`.
    const start = /^\[$/m.exec(stdout)?.index;
    expect(start, `the JSON in:\n${stdout}`).to.be.a('number');
    const report = JSON.parse(stdout.slice(start)) as { name: string; version: string; files: { path: string }[] }[];
    expect(report.length, 'one package').to.equal(1);
    const published = report[0];
    expect(published).to.include({ name: manifest['name'], version: manifest.version });
    const files = (published?.files ?? []).map((file) => file.path).sort();

    const builds = { '.ts': ['.js', '.d.ts'], '.cts': ['.cjs', '.d.cts'], '.mts': ['.mjs', '.d.mts'] } as const;
    const expected = ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json', 'dist/cjs/package.json'];
    for (const source of sourceFiles()) {
      const extension = /\.[cm]?ts$/.exec(source)?.[0] as keyof typeof builds;
      for (const format of ['esm', 'cjs']) {
        for (const built of builds[extension]) expected.push(`dist/${format}/${source.slice(0, -extension.length)}${built}`);
      }
    }
    expect(files).to.deep.equal(expected.sort());

    // Every file package.json points at (exports, typesVersions, main, module, types) is published.
    const targets = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(targets) : [];
    const named = targets([manifest.exports, manifest['typesVersions'], manifest['main'], manifest['module'], manifest['types']]);
    expect(named.length).to.be.above(30);
    for (const file of named) expect(files, file).to.include(file.replace(/^\.\//, ''));

    // src/ is not published: no built file may point at a source map.
    const mapped = files.filter((file) => /\.[cm]?js$/.test(file) && readFileSync(join(REPO, file), 'utf8').includes('sourceMappingURL'));
    expect(mapped, 'built files that name a source map').to.deep.equal([]);
  });

  it('deno publish --dry-run of jsr.json passes and lists README.md, CHANGELOG.md, LICENSE, jsr.json and the files of src/ its entries import, and nothing else', async () => {
    const deno = runtimeBinary('deno');
    const denoDir = mkdtempSync(join(tmpdir(), 'rwl-jsr-'));
    try {
      const env = cleanEnv({ DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' });
      // A dry run only reads the tree: a checkout with uncommitted changes is fine.
      const { code, stdout, stderr } = await execute(deno.path, ['publish', '--dry-run', '--allow-dirty'], env, 180_000);
      const output = `${stdout}${stderr}`;
      expect(code, `deno publish --dry-run failed:\n${output}`).to.equal(0);
      expect(output).to.include(`Simulating publish of ${jsr.name}@${jsr.version} with files:`);
      expect(output).to.include('Checking for slow types in the public API');
      const root = pathToFileURL(REPO).href.replace(/\/?$/, '/');
      const files = [...output.matchAll(/^\s+(file:\/\/\S+) \(/gm)].map((match) => decodeURI((match[1] as string).slice(root.length))).sort();
      const reached = reachedSources(Object.values(jsr.exports).map((entry) => entry.replace(/^\.\//, '')));
      expect(reached.length, 'the files the entries reach').to.be.above(20);
      const expected = ['CHANGELOG.md', 'LICENSE', 'README.md', 'jsr.json', ...reached];
      const unreached = files.filter((file) => !expected.includes(file));
      expect(unreached, "published, but no entry of jsr.json imports them: exclude them in jsr.json's `publish.exclude`").to.deep.equal([]);
      expect(
        expected.filter((file) => !files.includes(file)),
        'imported by an entry of jsr.json, but not published',
      ).to.deep.equal([]);
    } finally {
      rmSync(denoDir, { recursive: true, force: true });
    }
  });

  it("jsr.json carries package.json's version and exports, from src/, the package's entries that run under Deno", () => {
    expect(jsr.version).to.equal(manifest.version);
    expect(jsr.name).to.equal('@rolling-window-limiter/rolling-window-limiter');
    // test/runtimes/deno.test.ts maps each file of src/ its Deno scripts import to the package's entry for it.
    const denoTest = readFileSync(join(REPO, 'test/runtimes/deno.test.ts'), 'utf8');
    const onDeno = Object.fromEntries(
      [...denoTest.matchAll(/"'(?:\.\.\/)+(src\/[^']+)\.js'": "'rolling-window-limiter(\/[^']+)?'"/g)].map((match) => [
        `.${match[2] ?? ''}`,
        `./${match[1]}.ts`,
      ]),
    );
    expect(Object.keys(onDeno)).to.include.members(['.', './hono']);
    expect(jsr.exports).to.deep.equal(onDeno);
    for (const [subpath, source] of Object.entries(jsr.exports)) {
      // The same module as the package's entry of that name, built.
      const built = (manifest.exports[subpath] as { import: { default: string } } | undefined)?.import.default;
      expect(built, `package.json's exports["${subpath}"]`).to.equal(source.replace(/^\.\/src\//, './dist/esm/').replace(/\.ts$/, '.js'));
    }
  });

  it('the release workflow checks the tag: v<version> passes, any other tag fails and says why', async () => {
    const check = (tag: string) => execute(process.execPath, ['scripts/check-release-tag.mjs', tag], cleanEnv(), 30_000);
    expect((await check(`v${manifest.version}`)).code).to.equal(0);
    for (const tag of [manifest.version, `v${manifest.version}-rc.1`, 'v99.0.0', '']) {
      const { code, stderr } = await check(tag);
      expect(code, tag).to.equal(1);
      expect(stderr).to.include(`is not v${manifest.version}, package.json's version`);
    }
    const workflow = readFileSync(join(REPO, '.github/workflows/release.yml'), 'utf8');
    for (const step of ["tags: ['v*']", 'node scripts/check-release-tag.mjs "$GITHUB_REF_NAME"', 'bash .ci/run', 'id-token: write', 'needs: ci']) {
      expect(workflow, step).to.include(step);
    }
    expect(workflow).to.match(/^\s+- run: npm publish --provenance --access public\b/m);
    expect(workflow).to.match(/^\s+- run: npx --no-install deno publish$/m);
  });
});
