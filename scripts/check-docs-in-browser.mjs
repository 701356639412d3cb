// Checks the API site in docs/api as a reader sees it (`npm run docs:check` builds it first):
// every local link resolves, and in the system Chromium (puppeteer-core; CHROMIUM=/path overrides)
// at 1280x1600 the index and RollingRateLimiter pages show what they should, load without
// failed requests or errors, and no <pre> wraps its lines. Screenshots go to docs/api/screenshots/.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import puppeteer from 'puppeteer-core';
import { findOnPath } from './system-tools.mjs';

const SITE = resolve('docs/api');
const VIEWPORT = { width: 1280, height: 1600 };
const failures = [];
function check(ok, message, details = []) {
  if (ok) return console.log(`  ok   ${message}`);
  failures.push(message);
  console.error(`  FAIL ${[message, ...details.slice(0, 20)].join('\n         ')}`);
}

function checkLinks() {
  const pages = readdirSync(SITE, { recursive: true })
    .filter((file) => file.endsWith('.html'))
    .map((file) => join(SITE, file));
  const ids = new Map();
  const idsOf = (file) =>
    ids.get(file) ?? ids.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\s(?:id|name)="([^"]+)"/g)].map((m) => m[1]))).get(file);
  const broken = [];
  let count = 0;
  for (const page of pages) {
    for (const [, reference] of readFileSync(page, 'utf8').matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      if (/^(?:[a-z][a-z\d+.-]*:|\/\/|#?$)/i.test(reference)) continue; // other sites, or the page itself
      count += 1;
      const [path, anchor] = reference.replaceAll('&amp;', '&').split('#', 2);
      let target = path ? resolve(page, '..', decodeURIComponent(path.split('?')[0])) : page;
      if (existsSync(target) && statSync(target).isDirectory()) target = join(target, 'index.html');
      if (!existsSync(target)) broken.push(`${relative(SITE, page)}: ${reference} (no such file)`);
      else if (anchor && /\.(?:html|svg)$/.test(target) && !idsOf(target).has(decodeURIComponent(anchor)))
        broken.push(`${relative(SITE, page)}: ${reference} (no such id)`);
    }
  }
  check(broken.length === 0, `links: ${count} local links and assets in ${pages.length} pages resolve`, broken);
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** Serves docs/api on 127.0.0.1, on a free port. */
function serve() {
  const server = createServer((request, response) => {
    try {
      const { pathname } = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (pathname === '/favicon.ico') return response.writeHead(204).end(); // asked for by the browser, not the site
      let file = resolve(SITE, `.${decodeURIComponent(pathname)}`);
      if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
      if (!file.startsWith(SITE + sep) || !existsSync(file)) return response.writeHead(404).end();
      response.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
    } catch {
      response.writeHead(400).end();
    }
  });
  return new Promise((listening, failed) => server.once('error', failed).listen(0, '127.0.0.1', () => listening(server)));
}

function pages() {
  const classPage = readdirSync(join(SITE, 'classes')).find((file) => /(?:^|\.)RollingRateLimiter\.html$/.test(file));
  if (classPage === undefined) throw new Error('no RollingRateLimiter page in docs/api/classes/');
  // Each guide's title, its first `# ` heading, must be in the site's navigation.
  const guides = readdirSync('docs/guides')
    .filter((file) => file.endsWith('.md'))
    .map((file) => /^#\s+(.+?)\s*$/m.exec(readFileSync(join('docs/guides', file), 'utf8'))?.[1] ?? file);
  return [
    {
      name: 'index page',
      path: '/',
      screenshot: 'index.png',
      title: 'rolling-window-limiter',
      headings: ['rolling-window-limiter', 'Quick start', 'Stacking tiers', 'Failure behaviour', 'Gotchas'],
      text: ['Exact rolling-window rate limits', 'RollingRateLimiter', 'RateLimiterStack', 'rolling-window-limiter/express', ...guides],
      members: [],
    },
    {
      name: 'RollingRateLimiter class page',
      path: `/classes/${classPage}`,
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

/* global document, getComputedStyle -- the functions given to evaluate() run in the page */
/** In the page: each <pre> taller than a copy of it that cannot wrap, with its text and rendered line counts. */
function wrappedPres() {
  const contentHeight = (element) => {
    const style = getComputedStyle(element);
    return element.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  };
  return [...document.querySelectorAll('pre')].flatMap((pre) => {
    const copy = Object.assign(pre.cloneNode(true), { style: 'white-space: pre; overflow: hidden' });
    pre.after(copy);
    const [rendered, unwrapped] = [contentHeight(pre), contentHeight(copy)];
    copy.remove();
    const lines = (pre.querySelector('code') ?? pre).innerText.replace(/\n$/, '').split('\n'); // not TypeDoc's Copy button
    return rendered > unwrapped + 1
      ? [`"${lines[0].trim().slice(0, 50)}": ${lines.length} lines of text render as ${Math.round((lines.length * rendered) / unwrapped)}`]
      : [];
  });
}

async function checkPage(browser, origin, page) {
  const tab = await browser.newPage();
  const problems = [];
  tab.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  tab.on('console', (message) => message.type() === 'error' && problems.push(`console error: ${message.text()}`));
  tab.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  tab.on('response', (response) => response.status() >= 400 && problems.push(`HTTP ${response.status()}: ${response.url()}`));
  await tab.setViewport(VIEWPORT);
  await tab.goto(origin + page.path, { waitUntil: 'networkidle0' });
  // TypeDoc shows the body, and fills in the navigation, from its scripts.
  await tab.waitForFunction(() => document.body.checkVisibility() && !document.getElementById('tsd-nav-container')?.innerText.includes('Loading'));
  const seen = await tab.evaluate(() => ({
    title: document.title,
    headings: [...document.querySelectorAll('h1, h2, h3')].map((heading) => heading.innerText.trim()),
    members: [...document.querySelectorAll('h3.tsd-anchor-link')].map((heading) => heading.innerText.trim().split(/\s/)[0]),
    text: document.body.innerText,
  }));
  const wrapped = await tab.evaluate(wrappedPres);
  const file = join(SITE, 'screenshots', page.screenshot);
  await tab.screenshot({ path: file });
  await tab.close();

  check(seen.title.includes(page.title), `${page.name}: title "${seen.title}"`);
  const missing = (expected, found) => expected.filter((item) => !found(item));
  const noHeadings = missing(page.headings, (h) => seen.headings.some((found) => found === h || found.startsWith(`${h} `)));
  check(
    noHeadings.length === 0,
    `${page.name}: headings ${page.headings.join(', ')}`,
    noHeadings.map((h) => `missing: ${h}`),
  );
  const compact = (text) => text.replace(/\s+/g, ''); // TypeDoc splits signatures over spans and lines
  const noText = missing(page.text, (text) => compact(seen.text).includes(compact(text)));
  check(
    noText.length === 0,
    `${page.name}: text ${page.text.join(', ')}`,
    noText.map((text) => `missing: ${text}`),
  );
  const noMembers = missing(page.members, (member) => seen.members.includes(member));
  if (page.members.length > 0)
    check(
      noMembers.length === 0,
      `${page.name}: members ${page.members.join(', ')}`,
      noMembers.map((m) => `missing: ${m}`),
    );
  check(problems.length === 0, `${page.name}: no failed requests, page errors or console errors`, problems);
  check(wrapped.length === 0, `${page.name}: no <pre> wraps its lines at ${VIEWPORT.width} px`, wrapped);
  check(statSync(file).size > 20_000, `${page.name}: screenshot ${relative('.', file)} (${Math.round(statSync(file).size / 1024)} KiB)`);
}

async function main() {
  if (!existsSync(join(SITE, 'index.html'))) throw new Error('no docs/api/index.html: build the site first (npm run docs)');
  const executablePath = process.env.CHROMIUM || findOnPath('chromium');
  if (!executablePath) throw new Error('no chromium: run `node scripts/ensure-chromium.mjs`, or set CHROMIUM=/path/to/chromium');
  console.log(`Checking the API site in docs/api with ${executablePath}`);
  checkLinks();
  mkdirSync(join(SITE, 'screenshots'), { recursive: true });
  const server = await serve();
  let browser;
  const stop = () => Promise.allSettled([browser?.close(), new Promise((closed) => server.close(closed).closeAllConnections())]);
  // Bounded in time: a hung page or browser fails the check instead of stalling it.
  const deadline = setTimeout(() => {
    check(false, 'gave up after 120 s');
    setTimeout(() => process.exit(1), 10_000).unref(); // in case closing hangs too
    void stop().then(() => process.exit(1));
  }, 120_000);
  try {
    // --no-sandbox: Chromium's sandbox refuses to run as root, as in containers and CI.
    browser = await puppeteer.launch({ executablePath, args: ['--no-sandbox'], timeout: 30_000 });
    const origin = `http://127.0.0.1:${server.address().port}`;
    for (const page of pages()) await checkPage(browser, origin, page).catch((error) => check(false, `${page.name}: ${error.message}`));
  } finally {
    clearTimeout(deadline);
    await stop();
  }
}

try {
  await main();
} catch (error) {
  check(false, error instanceof Error ? error.message : String(error));
}
if (failures.length > 0) process.exitCode = 1;
console.log(failures.length > 0 ? `check-docs-in-browser: ${failures.length} check(s) failed` : 'check-docs-in-browser: the API site renders as it should');
