// What a first-time user reads before anything runs, checked where it used to
// mislead: the README's Set-up gives the whole suite's time and the fast loop
// (a script package.json has), and the guide for rolling-rate-limiter's users
// says that an injected clock reads microseconds since the epoch, and how fake
// times from 0 (as rolling-rate-limiter's tests inject them) map to one: its
// example (examples/snippets/migrating-clock.ts) runs in test/docs/snippets.test.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { codeBlocks } from './code-blocks.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The text of `file` under its `## heading`, up to the next `## `. */
function section(file: string, heading: string): string {
  const text = readFileSync(join(REPO, file), 'utf8');
  const parts = text.split(new RegExp(`^## ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  expect(parts, `${file} has a "## ${heading}" section`).to.have.length(2);
  return parts[1]?.split(/^## /m)[0] ?? '';
}

describe('the first steps in the docs', () => {
  it('README: the Set-up gives the whole suite’s time and `npm run test:unit` as the fast loop', () => {
    const setUp = section('README.md', 'Set-up: the demo and the tests');
    expect(setUp).to.match(/whole suite takes about \d+ minutes/);
    const fastLoop = /`npm run ([\w:-]+)`[^.]*\bfast loop\b/.exec(setUp)?.[1];
    expect(fastLoop, 'a script named as the fast loop').to.equal('test:unit');
    const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts).to.have.property('test:unit');
  });

  it('the migration guide: an injected clock reads microseconds since the epoch, and fake times from 0 take an offset', () => {
    const file = 'docs/guides/migrating-from-rolling-rate-limiter.md';
    const guide = readFileSync(join(REPO, file), 'utf8');
    expect(guide, 'no clock of bare microseconds (a reading below 10^15 is refused)').to.not.include('clock: () => microseconds');
    const checklist = section(file, 'Checklist');
    const clockStep = checklist.split(/^\d+\. /m).find((step) => step.includes('`clock`')) ?? '';
    expect(clockStep).to.include('since the epoch').and.to.include('10^15').and.to.include('offset');
    const example = codeBlocks(file).find((block) => block.source?.startsWith('examples/snippets/migrating-clock.ts'));
    expect(example, 'the guide shows the offset at work').to.not.equal(undefined);
    expect(example?.code)
      .to.match(/setTime\(0\)/)
      .and.to.match(/clock: \(\) => START_US \+ fakeMs \* 1000/);
  });
});
