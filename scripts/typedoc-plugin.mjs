// TypeDoc plugin for this project's API site (loaded through typedoc.json's
// `plugin`). It changes names, links and heading anchors, never what is
// documented:
//
// - The two entry points are named by the specifiers users import them with,
//   `rolling-window-limiter` and `rolling-window-limiter/express` (read from
//   package.json's `exports`), instead of TypeDoc's `index` and `express`.
//   Comments can then link across entry points with a TSDoc declaration
//   reference such as `{@link rolling-window-limiter!RollingRateLimiter}`.
// - A project document without a `title` in front matter is named by its first
//   `# ` heading instead of its file name (`Exact semantics`, not `semantics`).
// - Markdown links to the `docs/` and `docs/guides/` directories (meaningful on
//   a Git host, which lists a directory) lead to the guides index page.
// - Every Markdown file in docs/guides/ must be a project document, so that a
//   new guide cannot be left out of the site unnoticed (an error, since the
//   build treats warnings as errors).
// - Markdown headings made of inline code (the README's "### `limit(id, options?)`")
//   keep that code in their anchor and in the "On This Page" list: TypeDoc
//   0.28 reads only a heading's plain text there, which left them blank.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { Application, Converter, ReflectionKind } from 'typedoc';

const root = fileURLToPath(new URL('..', import.meta.url));
const GUIDES_DIRECTORY = join(root, 'docs', 'guides');
const GUIDES_INDEX = join(GUIDES_DIRECTORY, 'README.md');
/** Directories whose links go to the guides index. */
const DIRECTORIES_OF_GUIDES = [join(root, 'docs'), GUIDES_DIRECTORY];

/** Maps each entry point's source file to the specifier it is imported by, from package.json's `exports`. */
function entryPointNames() {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const names = new Map();
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const esm = target?.import?.default;
    if (typeof esm !== 'string' || !esm.startsWith('./dist/esm/')) continue;
    const source = resolve(root, 'src', esm.slice('./dist/esm/'.length).replace(/\.js$/, '.ts'));
    names.set(source, subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`);
  }
  return names;
}

/** The text of a document's first `# ` heading, if it starts with one. */
function firstHeading(document) {
  const text = (document.content ?? []).map((part) => part.text).join('');
  const match = /^\s*#\s+(.+?)\s*#*\s*$/m.exec(text);
  return match && text.trimStart().startsWith('#') ? match[1] : undefined;
}

/**
 * A markdown-it rule that gives each inline code span of a heading a text child with its code: TypeDoc takes a
 * heading's anchor and table-of-contents text from its text tokens, and markdown-it renders the span from its
 * `content` as before.
 */
function headingCodeAsText(md) {
  md.core.ruler.push('heading-code-as-text', (state) => {
    state.tokens.forEach((token, index) => {
      if (token.type !== 'inline' || state.tokens[index - 1]?.type !== 'heading_open') return;
      for (const child of token.children ?? []) {
        if (child.type !== 'code_inline' || child.children) continue;
        const text = new state.Token('text', '', 0);
        text.content = child.content;
        child.children = [text];
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
  const documentPaths = new Map();

  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const path = document.project.files.getReflectionPath(document);
    if (path !== undefined) documentPaths.set(resolve(path), document);
    if (!('title' in (document.frontmatter ?? {}))) {
      const heading = firstHeading(document);
      if (heading !== undefined) document.name = heading;
    }
  });

  app.converter.on(
    Converter.EVENT_RESOLVE_BEGIN,
    (context) => {
      const { project } = context;
      for (const module of project.getReflectionsByKind(ReflectionKind.Module)) {
        const file = module.sources?.[0]?.fullFileName;
        const name = file === undefined ? undefined : names.get(resolve(file));
        if (name !== undefined) module.name = name;
      }

      const index = documentPaths.get(GUIDES_INDEX);
      if (index !== undefined) {
        for (const directory of DIRECTORIES_OF_GUIDES) {
          project.files.registerReflectionPath(directory, index);
          project.files.registerReflectionPath(`${directory}/`, index);
        }
      }

      if (existsSync(GUIDES_DIRECTORY)) {
        for (const file of readdirSync(GUIDES_DIRECTORY)) {
          if (file.endsWith('.md') && !documentPaths.has(join(GUIDES_DIRECTORY, file))) {
            app.logger.warn(`docs/guides/${file} is not in typedoc.json's projectDocuments: add it, so that the site has it`);
          }
        }
      }
    },
    // Before TypeDoc's own resolve-begin handlers, so that links see the new names.
    200,
  );
}
