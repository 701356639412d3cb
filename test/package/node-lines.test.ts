// The Node.js lines the package is tested on: scripts/node-lines.json pins one
// release of each, which .ci/run tests (scripts/node-lines.mjs: the unit suite
// and the memory and ioredis contracts under each). package.json's `engines`,
// the README and the development guide name exactly those lines.

import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../support/packed-package.js';

const read = (file: string): string => readFileSync(join(REPO, file), 'utf8');
const pins = JSON.parse(read('scripts/node-lines.json')) as Record<string, string>;
const lines = Object.keys(pins).map(Number);

describe('the Node.js lines', () => {
  it('scripts/node-lines.json pins one exact release of each long-term (even) line, oldest first', () => {
    expect(lines.length).to.be.at.least(2);
    for (const [index, line] of lines.entries()) {
      expect(line % 2, `Node ${line} is a long-term line`).to.equal(0);
      if (index > 0) expect(line, 'oldest first').to.be.above(lines[index - 1] as number);
      expect(pins[line], `the release pinned for Node ${line}`).to.match(new RegExp(`^${line}\\.\\d+\\.\\d+$`));
    }
  });

  it("package.json's engines names exactly those lines (and the lines after the newest)", () => {
    const { engines } = JSON.parse(read('package.json')) as { engines: { node: string } };
    const last = lines[lines.length - 1] as number;
    expect(engines.node).to.equal([...lines.slice(0, -1).map((line) => `^${line}`), `>=${last}`].join(' || '));
  });

  it('the README and the development guide say which lines are tested', () => {
    const named = `Node.js ${lines.slice(0, -1).join(', ')} and ${lines[lines.length - 1]}`;
    expect(read('README.md')).to.include(named);
    expect(read('docs/guides/development.md')).to.include(named);
  });
});
