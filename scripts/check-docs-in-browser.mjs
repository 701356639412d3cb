// Browser check of the API site, run by `npm run docs:check` after the site
// is built into docs/api (`npm run docs`). Plain Node, no dependencies:
//
// 1. every local link and asset reference in docs/api resolves to a file (and
//    an `#anchor` to an id in it);
// 2. docs/api is served on 127.0.0.1 (node:http, a free port), and Debian's
//    headless Chromium opens the index page and the RollingRateLimiter class
//    page: their rendered DOM (`--dump-dom`) must hold the expected titles,
//    guides and method names, and every file they request must be served;
//    and no <pre> on them may wrap its lines at 1280 px (a script the server
//    adds to each page compares every <pre> with an unwrapped copy of it);
// 3. a screenshot of each page is saved (docs/api/screenshots/index.png and
//    rolling-rate-limiter.png) and must be a real 1280x1600 PNG that is not
//    blank.
//
// Each Chromium runs in its own process group with a fresh profile directory;
// only that group is ever killed, and only when it overruns its time limit or
// outlives its main process. The whole check is bounded in time.
// CHROMIUM=/path/to/chrome picks another browser binary.

import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL } from 'node:url';
import { inflateSync } from 'node:zlib';

const SITE = resolve('docs/api');
const SCREENSHOTS = join(SITE, 'screenshots');
const GUIDES = resolve('docs/guides');
const CHROMIUM = process.env.CHROMIUM || 'chromium';
const WINDOW = { width: 1280, height: 1600 };
/** Longest one Chromium run may take before its process group is killed. */
const RUN_TIMEOUT_MS = 60_000;
/** Longest the whole check may take. */
const TOTAL_TIMEOUT_MS = 240_000;

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--hide-scrollbars',
  `--window-size=${WINDOW.width},${WINDOW.height}`,
  // Let the page's scripts (navigation, search index) finish before the DOM is dumped or the screenshot taken.
  '--virtual-time-budget=5000',
];

const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const failures = [];
function fail(message) {
  failures.push(message);
  console.error(`  FAIL ${message}`);
}
function pass(message) {
  console.log(`  ok   ${message}`);
}

// ---------------------------------------------------------------- the pages

/** The class page of RollingRateLimiter, wherever TypeDoc's router put it. */
function classPagePath() {
  const directory = join(SITE, 'classes');
  const page = existsSync(directory) ? readdirSync(directory).find((file) => file.endsWith('.RollingRateLimiter.html') || file === 'RollingRateLimiter.html') : undefined;
  if (page === undefined) throw new Error(`no RollingRateLimiter class page in ${relative(process.cwd(), directory)}: build the site first (npm run docs)`);
  return `/classes/${page}`;
}

/** The title (first `# ` heading) of every guide, as the site's navigation must list it. */
function guideTitles() {
  if (!existsSync(GUIDES)) return [];
  return readdirSync(GUIDES)
    .filter((file) => file.endsWith('.md'))
    .map((file) => /^#\s+(.+?)\s*$/m.exec(readFileSync(join(GUIDES, file), 'utf8'))?.[1])
    .filter((title) => title !== undefined);
}

function pages() {
  return [
    {
      name: 'index page',
      path: '/',
      screenshot: 'index.png',
      title: 'rolling-window-limiter',
      headings: ['rolling-window-limiter', 'Options', 'Methods', 'Stacking tiers', 'Failure behaviour'],
      text: ['Exact rolling-window rate limits', 'RollingRateLimiter', 'RateLimiterStack', 'rolling-window-limiter/express', ...guideTitles()],
      members: [],
    },
    {
      name: 'RollingRateLimiter class page',
      path: classPagePath(),
      screenshot: 'rolling-rate-limiter.png',
      title: 'RollingRateLimiter',
      headings: ['Class RollingRateLimiter'],
      text: ['An exact rolling-window rate limiter', 'Promise<boolean>', 'RateLimitInfo'],
      members: [
        'constructor',
        'limit',
        'limitWithInfo',
        'wouldLimit',
        'wouldLimitWithInfo',
        'clear',
        'undo',
        'waitUntilAllowed',
        'wrap',
        'interval',
        'maxInInterval',
        'minDifference',
        'namespace',
        'countBlocked',
        'clock',
      ],
    },
  ];
}

// ------------------------------------------------------------ HTML reading

function decodeEntities(text) {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&nbsp;|&#160;/g, ' ')
    .replace(/&amp;/g, '&');
}

/** Visible-ish text of an HTML fragment: tags dropped (`<wbr>` joins words), entities decoded, spaces collapsed. */
function textOf(html) {
  return decodeEntities(
    html
      .replace(/<script\b[\s\S]*?<\/script>/gi, ' ')
      .replace(/<style\b[\s\S]*?<\/style>/gi, ' ')
      .replace(/<wbr\s*\/?>/gi, '')
      .replace(/<[^>]+>/g, ' '),
  )
    .replace(/\s+/g, ' ')
    .trim();
}

/** The text of every element matching `<tag ...>...</tag>` (not nested in itself). */
function elementTexts(html, tag, attributePattern = '') {
  const pattern = new RegExp(`<${tag}\\b[^>]*${attributePattern}[^>]*>([\\s\\S]*?)</${tag}>`, 'gi');
  return [...html.matchAll(pattern)].map((match) => textOf(match[1]));
}

/**
 * Added to every HTML page served: once the page shows (TypeDoc hides the body until its script runs), counts the
 * <pre> blocks that wrap (taller than a copy with `white-space: pre`) and leaves the count, and the first such
 * block's first line, on <html> for the DOM dump.
 */
const WRAPPED_PRE_PROBE = `<script>addEventListener('load', () => setTimeout(() => {
  const wrapped = [...document.querySelectorAll('pre')].filter((pre) => {
    const copy = pre.cloneNode(true);
    copy.style.whiteSpace = 'pre';
    copy.style.overflow = 'hidden';
    pre.after(copy);
    const wraps = pre.getBoundingClientRect().height > copy.getBoundingClientRect().height + 1;
    copy.remove();
    return wraps;
  });
  document.documentElement.dataset.wrappedPre = String(wrapped.length);
  document.documentElement.dataset.wrappedPreFirst = (wrapped[0]?.textContent ?? '').split('\\n')[0].slice(0, 80);
}, 1500));</script>`;

function checkDom(page, dom) {
  const wrapped = /data-wrapped-pre="(\d+)"/.exec(dom)?.[1];
  const first = /data-wrapped-pre-first="([^"]*)"/.exec(dom)?.[1] ?? '';
  if (wrapped === undefined) fail(`${page.name}: the <pre> wrapping probe did not run`);
  else if (wrapped === '0') pass(`${page.name}: no <pre> wraps at ${WINDOW.width} px`);
  else fail(`${page.name}: ${wrapped} <pre> block(s) wrap at ${WINDOW.width} px, the first starting "${decodeEntities(first)}"`);

  const title = elementTexts(dom, 'title')[0] ?? '';
  if (title.includes(page.title)) pass(`${page.name}: <title> is "${title}"`);
  else fail(`${page.name}: <title> is "${title}", expected it to contain "${page.title}"`);

  const headings = ['h1', 'h2', 'h3'].flatMap((tag) => elementTexts(dom, tag));
  const missingHeadings = page.headings.filter((heading) => !headings.some((found) => found === heading || found.startsWith(`${heading} `)));
  if (missingHeadings.length === 0) pass(`${page.name}: headings ${page.headings.map((h) => `"${h}"`).join(', ')}`);
  else fail(`${page.name}: no heading ${missingHeadings.map((h) => `"${h}"`).join(', ')} (found ${headings.slice(0, 20).join(' | ')})`);

  // Compared without white space: TypeDoc splits signatures such as `Promise<boolean>` into spans.
  const compact = (value) => value.replace(/\s+/g, '');
  const text = compact(textOf(dom));
  const missingText = page.text.filter((expected) => !text.includes(compact(expected)));
  if (missingText.length === 0) pass(`${page.name}: text ${page.text.map((t) => `"${t}"`).join(', ')}`);
  else fail(`${page.name}: the rendered page lacks ${missingText.map((t) => `"${t}"`).join(', ')}`);

  if (page.members.length > 0) {
    // TypeDoc renders each member as <h3 class="tsd-anchor-link" id="..."><span>name</span>...</h3>.
    const members = new Set(elementTexts(dom, 'h3', 'class="tsd-anchor-link').map((heading) => heading.split(' ')[0]));
    const missingMembers = page.members.filter((member) => !members.has(member));
    if (missingMembers.length === 0) pass(`${page.name}: members ${page.members.join(', ')}`);
    else fail(`${page.name}: no member ${missingMembers.join(', ')} (found ${[...members].join(', ')})`);
  }
}

// ------------------------------------------------------------- the server

/** Serves docs/api; records every request and its status. */
function startServer() {
  const requests = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let file = resolve(SITE, `.${decodeURIComponent(url.pathname)}`);
    if (file !== SITE && !file.startsWith(SITE + sep)) file = undefined; // no way out of the site
    if (file !== undefined && existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (file === undefined || !existsSync(file) || !statSync(file).isFile()) {
      requests.push({ path: url.pathname, status: 404 });
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    requests.push({ path: url.pathname, status: 200 });
    res.writeHead(200, { 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
    const body = readFileSync(file);
    res.end(extname(file) === '.html' ? body.toString('utf8').replace('</body>', `${WRAPPED_PRE_PROBE}</body>`) : body);
  });
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolveServer({ server, requests, origin: `http://127.0.0.1:${port}` });
    });
  });
}

// ------------------------------------------------------------ the browser

const running = new Set();

/** Kills the process group of a Chromium this script started (and nothing else). */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

/** Runs one headless Chromium in its own process group, with a fresh profile; resolves with its output. */
function runChromium(args) {
  const profile = mkdtempSync(join(tmpdir(), 'rwl-docs-chromium-'));
  return new Promise((resolveRun, reject) => {
    let child;
    try {
      child = spawn(CHROMIUM, [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, ...args], {
        detached: true, // its own process group: killGroup() reaches its helpers, and only them
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      rmSync(profile, { recursive: true, force: true });
      reject(error);
      return;
    }
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, RUN_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      rmSync(profile, { recursive: true, force: true });
      reject(new Error(`could not start ${CHROMIUM}: ${error.message} (run node scripts/ensure-chromium.mjs, or set CHROMIUM)`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(child); // helpers that outlived the browser process
      running.delete(child);
      rmSync(profile, { recursive: true, force: true });
      resolveRun({ code, signal, stdout, stderr, timedOut });
    });
  });
}

function describeRun(run) {
  const reason = run.timedOut ? `timed out after ${RUN_TIMEOUT_MS} ms` : `exited with ${run.signal ?? run.code}`;
  const lastLines = run.stderr.trim().split('\n').slice(-5).join('\n      ');
  return `${reason}${lastLines ? `\n      ${lastLines}` : ''}`;
}

// ----------------------------------------------------------- screenshots

/** Checks a PNG: the signature, its size, and that it is not blank (the pixel data has many distinct byte values). */
function checkPng(page, file) {
  if (!existsSync(file)) return fail(`${page.name}: no screenshot was written to ${relative(process.cwd(), file)}`);
  const png = readFileSync(file);
  if (png.length < 8 || png.readUInt32BE(0) !== 0x89504e47 || png.toString('latin1', 12, 16) !== 'IHDR') {
    return fail(`${page.name}: ${relative(process.cwd(), file)} is not a PNG`);
  }
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const chunks = [];
  for (let offset = 8; offset + 8 <= png.length; ) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (type === 'IDAT') chunks.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(chunks));
  const distinct = new Set();
  for (let i = 0; i < pixels.length && distinct.size < 256; i += 7) distinct.add(pixels[i]);
  const where = `${relative(process.cwd(), file)} (${width}x${height}, ${Math.round(png.length / 1024)} KiB)`;
  if (width !== WINDOW.width || height !== WINDOW.height) fail(`${page.name}: ${where}, expected ${WINDOW.width}x${WINDOW.height}`);
  else if (distinct.size < 32) fail(`${page.name}: ${where} looks blank (${distinct.size} distinct byte values)`);
  else pass(`${page.name}: screenshot ${where}`);
}

// ------------------------------------------------------------ local links

/** Every local href/src in the site resolves to a file, and every #anchor to an id in it. */
function checkLinks() {
  const htmlFiles = [];
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.html')) htmlFiles.push(path);
    }
  };
  walk(SITE);
  const idsCache = new Map();
  const idsOf = (file) => {
    if (!idsCache.has(file)) idsCache.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\s(?:id|name)="([^"]+)"/g)].map((m) => m[1])));
    return idsCache.get(file);
  };
  const broken = [];
  let checked = 0;
  for (const file of htmlFiles) {
    const html = readFileSync(file, 'utf8');
    for (const [, reference] of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      if (reference === '' || reference === '#' || /^[a-z][a-z0-9+.-]*:/i.test(reference) || reference.startsWith('//')) continue;
      checked += 1;
      const [pathAndQuery, anchor] = decodeEntities(reference).split('#', 2);
      const path = pathAndQuery.split('?', 1)[0];
      let target = path === '' ? file : resolve(file, '..', decodeURIComponent(path));
      if (existsSync(target) && statSync(target).isDirectory()) target = join(target, 'index.html');
      const from = relative(SITE, file);
      if (!existsSync(target)) broken.push(`${from}: ${reference} (no file)`);
      else if (anchor && (target.endsWith('.html') || target.endsWith('.svg')) && !idsOf(target).has(decodeURIComponent(anchor))) {
        broken.push(`${from}: ${reference} (no id "${anchor}")`);
      }
    }
  }
  if (broken.length === 0) pass(`links: ${checked} local links and assets in ${htmlFiles.length} pages resolve`);
  else fail(`links: ${broken.length} broken:\n      ${broken.slice(0, 20).join('\n      ')}`);
}

// ------------------------------------------------------------------- main

async function main() {
  if (!existsSync(join(SITE, 'index.html'))) throw new Error('docs/api/index.html is missing: build the site first (npm run docs)');
  console.log(`Checking the API site in ${relative(process.cwd(), SITE)} with ${CHROMIUM}`);
  checkLinks();

  rmSync(SCREENSHOTS, { recursive: true, force: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
  const { server, requests, origin } = await startServer();
  try {
    for (const page of pages()) {
      const url = `${origin}${page.path}`;
      const firstRequest = requests.length;
      const dump = await runChromium(['--dump-dom', url]);
      if (dump.code !== 0 || dump.timedOut || dump.stdout.trim() === '') {
        fail(`${page.name}: chromium --dump-dom ${url} ${describeRun(dump)}`);
      } else {
        checkDom(page, dump.stdout);
      }
      const made = requests.slice(firstRequest);
      const missing = made.filter((request) => request.status !== 200 && request.path !== '/favicon.ico');
      if (!made.some((request) => request.path === page.path)) fail(`${page.name}: the browser never requested ${page.path}`);
      else if (missing.length === 0) pass(`${page.name}: all ${made.length} requests served`);
      else fail(`${page.name}: not found: ${missing.map((request) => request.path).join(', ')}`);

      const file = join(SCREENSHOTS, page.screenshot);
      const shot = await runChromium([`--screenshot=${file}`, url]);
      if (shot.code !== 0 || shot.timedOut) fail(`${page.name}: chromium --screenshot ${describeRun(shot)}`);
      checkPng(page, file);
    }
  } finally {
    server.closeAllConnections?.();
    await new Promise((resolveClose) => server.close(() => resolveClose()));
  }
}

function stopEverything() {
  for (const child of running) killGroup(child);
}

const deadline = setTimeout(() => {
  console.error(`check-docs-in-browser: gave up after ${TOTAL_TIMEOUT_MS} ms`);
  stopEverything();
  process.exit(1);
}, TOTAL_TIMEOUT_MS);
deadline.unref();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopEverything();
    process.exit(1);
  });
}

try {
  await main();
} catch (error) {
  stopEverything();
  fail(error instanceof Error ? error.message : String(error));
}
clearTimeout(deadline);
if (failures.length > 0) {
  console.error(`check-docs-in-browser: ${failures.length} check(s) failed`);
  process.exitCode = 1;
} else {
  console.log(`check-docs-in-browser: the API site renders; screenshots in ${relative(process.cwd(), SCREENSHOTS)}/ (${readdirSync(SCREENSHOTS).map((f) => basename(f)).join(', ')})`);
}
