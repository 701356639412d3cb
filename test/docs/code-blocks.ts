// The fenced blocks of the README and the pages under docs/, and the file
// each one names (the comment embedme reads), for the tests of test/docs/.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The Markdown files whose blocks are checked: the README and every page under docs/ (not the generated site). */
export function documentFiles(): string[] {
  const inDir = (dir: string): string[] =>
    readdirSync(join(REPO, dir))
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => `${dir}/${file}`);
  return ['README.md', ...inDir('docs'), ...inDir('docs/guides')];
}

/** One fenced block of a Markdown file. */
export interface CodeBlock {
  readonly file: string;
  readonly line: number;
  readonly language: string;
  readonly code: string;
  /** The path in the `<!-- embedme path -->` comment before it, or in its first line (`// path`), if any. */
  readonly source: string | undefined;
}

/** Every fenced block of `file`, with the file each names (the comment embedme reads, between it and the block before). */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  let between: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,})(\S*)/.exec(lines[i] ?? '');
    if (open === null) {
      between.push(lines[i] ?? '');
      continue;
    }
    const fence = open[1] ?? '```';
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] ?? '').trim().startsWith(fence); i++) body.push(lines[i] ?? '');
    const comment = /<!--\s*embedme\s+(\S+?)\s*-->/.exec(between.join('\n'))?.[1];
    const firstLine = /^\s*(?:\/\/|#)\s*(examples\/\S+)\s*$/.exec(body[0] ?? '')?.[1];
    blocks.push({ file, line: start + 1, language: open[2] ?? '', code: body.join('\n'), source: comment ?? firstLine });
    between = [];
  }
  return blocks;
}
