// The README is the five-minute tour: at most 15 KB, its picture is what
// `npm run demo` prints, and its Set-up names the two commands that work on a
// fresh machine. Everything else lives in docs/guides/ (see the guides' index).

import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { codeBlocks } from './code-blocks.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const README = join(REPO, 'README.md');

describe('the README', function () {
  this.timeout(60_000);

  it('is at most 15 KB', () => {
    expect(statSync(README).size).to.be.at.most(15 * 1024);
  });

  it('shows the picture that `npm run demo` prints, line for line', async () => {
    const picture = codeBlocks('README.md')[0];
    expect(picture?.language, 'the first block is the picture').to.equal('text');
    // The demo script of package.json, run as npm runs it (its tsx from node_modules/.bin), in memory, without colour.
    const demo = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.demo ?? '';
    expect(demo).to.match(/^tsx \S+\.ts$/);
    const stdout = await new Promise<string>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
      delete env.REDIS_URL;
      execFile(join(REPO, 'node_modules/.bin/tsx'), demo.split(' ').slice(1), { cwd: REPO, env, timeout: 50_000, encoding: 'utf8' }, (error, out) =>
        error === null ? resolve(out) : reject(new Error(`npm run demo failed: ${error.message}`)),
      );
    });
    const printed = stdout.split('\n');
    const shown = (picture?.code ?? '').split('\n');
    const start = printed.indexOf(shown[0] ?? '');
    expect(start, `the demo prints the picture's first line:\n${shown[0]}\n\nit printed:\n${stdout}`).to.be.at.least(0);
    expect(printed.slice(start, start + shown.length)).to.deep.equal(shown);
  });

  it('names the two set-up commands: the demo and the whole test suite', () => {
    const section =
      readFileSync(README, 'utf8')
        .split(/^## Set-up: the demo and the tests$/m)[1]
        ?.split(/^## /m)[0] ?? '';
    const commands = /```sh\n([\s\S]*?)```/
      .exec(section)?.[1]
      ?.split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/\s+#.*$/, ''));
    expect(commands).to.deep.equal(['npm ci && npm run demo', 'npm ci && npm test']);
  });
});
