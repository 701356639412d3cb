// TypeDoc plugin for the API site (typedoc.json's `plugin`); it changes names, links and anchors, not content:
// - entry points are named as users import them (`rolling-window-limiter/express`, from package.json's
//   `exports`), so comments can link across them: `{@link rolling-window-limiter!RollingRateLimiter}`;
// - a document without a front-matter `title` is named by its first `# ` heading, not its file name;
// - links to the docs/ and docs/guides/ directories (listed by a Git host) lead to the guides index;
// - a guide in docs/guides/ missing from projectDocuments is a warning (so an error: warnings are errors);
// - headings of inline code (the README's "### `limit(id, options?)`") keep it in their anchor and in
//   "On This Page": TypeDoc 0.28 reads only a heading's text tokens there, which left them blank.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { Application, Converter, ReflectionKind } from 'typedoc';

const root = fileURLToPath(new URL('..', import.meta.url));
const GUIDES = join(root, 'docs', 'guides');

/** Each entry point's source file, mapped to the specifier it is imported by. */
function entryPointNames() {
  const { name, exports = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return new Map(
    Object.entries(exports)
      .filter(([, target]) => target?.import?.default?.startsWith('./dist/esm/'))
      .map(([subpath, target]) => [
        resolve(root, 'src', target.import.default.slice('./dist/esm/'.length).replace(/\.js$/, '.ts')),
        subpath === '.' ? name : `${name}/${subpath.slice(2)}`,
      ]),
  );
}

/** markdown-it rule: each inline code span in a heading gets a text child with its code (rendering is unchanged). */
function headingCodeAsText(md) {
  md.core.ruler.push('heading-code-as-text', (state) => {
    state.tokens.forEach((token, index) => {
      if (token.type !== 'inline' || state.tokens[index - 1]?.type !== 'heading_open') return;
      for (const child of token.children ?? []) {
        if (child.type !== 'code_inline' || child.children) continue;
        child.children = [Object.assign(new state.Token('text', '', 0), { content: child.content })];
      }
    });
  });
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  const names = entryPointNames();
  // Options are read again after plugins load, so the loader is wrapped once they have been.
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    const loadMarkdownIt = app.options.getValue('markdownItLoader');
    app.options.setValue('markdownItLoader', (md) => {
      loadMarkdownIt(md);
      headingCodeAsText(md);
    });
  });

  const documents = new Map();
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const path = document.project.files.getReflectionPath(document);
    if (path !== undefined) documents.set(resolve(path), document);
    const text = (document.content ?? []).map((part) => part.text).join('');
    const heading = text.trimStart().startsWith('#') ? /^\s*#\s+(.+?)\s*#*\s*$/m.exec(text)?.[1] : undefined;
    if (!('title' in (document.frontmatter ?? {})) && heading !== undefined) document.name = heading;
  });

  app.converter.on(
    Converter.EVENT_RESOLVE_BEGIN,
    ({ project }) => {
      for (const module of project.getReflectionsByKind(ReflectionKind.Module)) {
        const file = module.sources?.[0]?.fullFileName;
        module.name = (file && names.get(resolve(file))) || module.name;
      }
      const index = documents.get(join(GUIDES, 'README.md'));
      for (const directory of index ? [join(root, 'docs'), GUIDES] : []) {
        project.files.registerReflectionPath(directory, index);
        project.files.registerReflectionPath(`${directory}/`, index);
      }
      for (const file of existsSync(GUIDES) ? readdirSync(GUIDES) : []) {
        if (file.endsWith('.md') && !documents.has(join(GUIDES, file))) {
          app.logger.warn(`docs/guides/${file} is not in typedoc.json's projectDocuments: add it, so that the site has it`);
        }
      }
    },
    200, // before TypeDoc's own handlers, so that links see the new names
  );
}
