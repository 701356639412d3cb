// The whole contract on Valkey 8 (valkey-server, which `npm test` installs on
// Debian from bookworm-backports; or VALKEY_URL / VALKEY_CLUSTER_URLS), as it
// runs on Redis 7: the single-limiter contract with its model test, the stack
// contract with its model test, action ids, costs, batch: true and concurrent
// connections; through ioredis on one server and on a three-master Valkey
// Cluster, node-redis 5 with RESP3, and Valkey GLIDE. Fewer random schedules
// than on Redis (ioredis.test.ts): the scripts and commands are the same, what
// differs is the server.
// Also: the server is Valkey (its version is in the test's title), the harness
// stops it by PID and names a missing valkey-server, a Valkey that may evict
// keys is warned about as a Redis is, and the install script reads apt's
// sources to add Debian's backports suite on the machine's own mirror.

import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import sinon from 'sinon';
import { RollingRateLimiter } from '../../src/index.js';
import { adapterFor } from '../../src/redis/adapters/create-adapter.js';
import { checkServerOnce, SERVER_WARNING_CODES } from '../../src/redis/server-checks.js';
import { GLIDE_STANDALONE } from '../support/glide-clients.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { startRedisServer, useValkey, VALKEY_SERVER_MISSING_MESSAGE, type UsedRedis } from '../support/redis-server.js';
import { describeRedisBackend } from './redis-backend.js';
import { ON_VALKEY, onValkey } from './redis-backends.js';

/** The fields of an `INFO` section. */
function infoFields(text: string): Map<string, string> {
  return new Map(
    text
      .split(/\r?\n/)
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
  );
}

describe('Valkey: the server', function () {
  this.timeout(20_000);
  const namespaces = uniqueNamespaces('valkey-server');
  const sandbox = sinon.createSandbox();
  let server: UsedRedis | undefined;
  let admin: Redis | undefined;
  before(async () => {
    server = await useValkey();
    admin = new Redis(server.url);
  });
  after(async () => {
    sandbox.restore();
    await admin?.config('SET', 'maxmemory-policy', 'noeviction');
    admin?.disconnect();
    await server?.stop();
  });

  it('is Valkey (server_name and valkey_version of INFO server), 8 or later', async function () {
    const info = infoFields(await (admin as Redis).info('server'));
    const version = info.get('valkey_version') ?? '';
    expect(info.get('server_name'), 'INFO server: server_name').to.equal('valkey');
    expect(Number.parseInt(version, 10), `valkey_version ${version}`).to.be.at.least(8);
    if (this.test !== undefined) this.test.title = `is Valkey ${version} (INFO server; Redis-compatible version ${info.get('redis_version')})`;
  });

  it('is started on 127.0.0.1 and stopped by its PID, and named with the way to install it when missing', async () => {
    const started = await startRedisServer({ binary: 'valkey-server' });
    const pid = started.pid as number;
    expect(started.host).to.equal('127.0.0.1');
    process.kill(pid, 0); // alive
    await started.stop();
    expect(() => process.kill(pid, 0))
      .to.throw()
      .with.property('code', 'ESRCH');
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await startRedisServer({ binary: 'valkey-server' }).then(
        () => expect.fail('startRedisServer should have failed'),
        (error: Error) => expect(error.message).to.equal(VALKEY_SERVER_MISSING_MESSAGE),
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it('warns about an evicting maxmemory-policy, once, as on Redis', async () => {
    const emitWarning = sandbox.stub(process, 'emitWarning');
    try {
      await (admin as Redis).config('SET', 'maxmemory-policy', 'allkeys-lru');
      const client = new Redis((server as UsedRedis).url);
      try {
        const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 1 });
        expect([await limiter.limit('user'), await limiter.limit('user')]).to.deep.equal([false, true]);
        await checkServerOnce(adapterFor(client));
      } finally {
        client.disconnect();
      }
      const codes = emitWarning.getCalls().map((call) => (call.args[1] as { code?: string } | undefined)?.code);
      expect(codes).to.deep.equal([SERVER_WARNING_CODES.evictingPolicy]);
      expect(String(emitWarning.firstCall.args[0])).to.include('maxmemory-policy allkeys-lru');
    } finally {
      emitWarning.restore();
      await (admin as Redis).config('SET', 'maxmemory-policy', 'noeviction');
    }
  });
});

describe("Valkey: the install script reads apt's sources (scripts/ensure-valkey-server.mjs)", () => {
  const script = pathToFileURL(join(process.cwd(), 'scripts', 'ensure-valkey-server.mjs')).href;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rwl-apt-sources-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  /** What the script makes of these source files: the entries it reads, and the backports stanza for `codename`. */
  const read = (files: readonly string[], codename: string): { entries: { uris: string[]; suites: string[]; signedBy?: string }[]; stanza: string | null } =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { debEntries, backportsStanza } from ${JSON.stringify(script)};` +
            `const entries = debEntries(${JSON.stringify(files)});` +
            `console.log(JSON.stringify({ entries, stanza: backportsStanza(entries, ${JSON.stringify(codename)}) ?? null }));`,
        ],
        { encoding: 'utf8' },
      ),
    ) as { entries: { uris: string[]; suites: string[]; signedBy?: string }[]; stanza: string | null };

  it('takes the mirror and keyring of the release entry (deb822), leaves out disabled stanzas and deb-src', async () => {
    const file = join(dir, 'debian.sources');
    await writeFile(
      file,
      [
        'Types: deb',
        '# a comment',
        'URIs: http://mirror.example/debian',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
        '',
        'Types: deb',
        'URIs: http://mirror.example/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        '',
        'Types: deb-src',
        'URIs: http://source.example/debian',
        'Suites: bookworm',
        '',
        'Enabled: no',
        'Types: deb',
        'URIs: http://old.example/debian',
        'Suites: bookworm-backports',
        '',
      ].join('\n'),
    );
    const { entries, stanza } = read([file], 'bookworm');
    expect(entries.map((entry) => entry.suites)).to.deep.equal([['bookworm', 'bookworm-updates'], ['bookworm-security']]);
    const fields = (stanza ?? '').split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(fields).to.deep.equal([
      'Types: deb',
      'URIs: http://mirror.example/debian',
      'Suites: bookworm-backports',
      'Components: main',
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
    ]);
  });

  it('reads one-line sources with their signed-by option, and has no stanza without an entry of the release', async () => {
    const file = join(dir, 'sources.list');
    await writeFile(
      file,
      ['# deb http://commented.example/debian bookworm main', 'deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main', ''].join('\n'),
    );
    const { entries, stanza } = read([file], 'bookworm');
    expect(entries).to.have.length(1);
    expect(entries[0]).to.deep.include({ uris: ['http://mirror.example/debian'], suites: ['bookworm'], signedBy: '/k.gpg' });
    expect(stanza).to.include('URIs: http://mirror.example/debian\nSuites: bookworm-backports').and.to.include('Signed-By: /k.gpg');
    expect(read([file], 'trixie').stanza).to.equal(null);
  });
});

// 200 schedules or more each (stacks in batches: half that): the model tests' checks of what a run covered
// (decisions on cost limiters, late calls, undos...) are sized per schedule and, on 50, fell short by chance.
describeRedisBackend(ON_VALKEY.ioredis.standalone, { modelSchedules: 400, stackSchedules: 200, batchSchedules: 200 });
describeRedisBackend(ON_VALKEY.ioredis.cluster, { modelSchedules: 200, stackSchedules: 200, batchSchedules: 200 });
describeRedisBackend(ON_VALKEY.nodeRedisResp3, { modelSchedules: 200, stackSchedules: 200, batchSchedules: 200 });
describeRedisBackend(onValkey(GLIDE_STANDALONE), { modelSchedules: 200, stackSchedules: 200, batchSchedules: 200 });
