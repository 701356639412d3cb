// A small runner for mocha's BDD interface, for runtimes where mocha itself
// does not load (workerd, Vercel's edge runtime): the shared contract files
// (test/contract/*-contract.ts) call describe/it/before/after/beforeEach/
// afterEach and `this.timeout()`, and that is all this implements, in mocha's
// order: a suite's `before` hooks, its tests, then its child suites, then its
// `after` hooks; `beforeEach` from the outermost suite in, `afterEach` from the
// innermost out. A failed `before` or `beforeEach` hook fails the tests it
// would have run (each reported once, under the hook's error), as mocha
// reports them; every test and hook has a time limit (this.timeout, inherited
// from the enclosing suite) past which it fails.

/** What `this` is in a suite, a test or a hook. */
interface RunnableContext {
  timeout(ms?: number): number | RunnableContext;
}

type Callback = (this: RunnableContext) => unknown;

interface Test {
  readonly title: string;
  readonly fn: Callback;
  timeoutMs?: number;
}

interface Suite {
  readonly title: string;
  readonly parent: Suite | undefined;
  readonly tests: Test[];
  readonly suites: Suite[];
  readonly before: Callback[];
  readonly after: Callback[];
  readonly beforeEach: Callback[];
  readonly afterEach: Callback[];
  timeoutMs: number | undefined;
}

/** A failed test or hook: its full title and the error's message and stack. */
export interface BddFailure {
  readonly title: string;
  readonly message: string;
  readonly stack: string;
}

/** What a run found. */
export interface BddResult {
  readonly passes: number;
  readonly failures: readonly BddFailure[];
  /** Titles of the top-level suites. */
  readonly suites: readonly string[];
  /** The full titles of the tests that passed, in the order they ran. */
  readonly passed: readonly string[];
  readonly durationMs: number;
}

const newSuite = (title: string, parent: Suite | undefined): Suite => ({
  title,
  parent,
  tests: [],
  suites: [],
  before: [],
  after: [],
  beforeEach: [],
  afterEach: [],
  timeoutMs: undefined,
});

const fullTitle = (suite: Suite | undefined, title: string): string => {
  const parts = [title];
  for (let at = suite; at?.parent !== undefined; at = at.parent) parts.unshift(at.title);
  return parts.join(' ');
};

/** The time limit that applies in `suite`: its own, or its nearest ancestor's, or `fallback`. */
const timeoutIn = (suite: Suite | undefined, fallback: number): number => {
  for (let at = suite; at !== undefined; at = at.parent) if (at.timeoutMs !== undefined) return at.timeoutMs;
  return fallback;
};

/** Runs `fn` with a `this` whose timeout() may change the limit while it runs; fails past the limit. */
async function runWithTimeout(fn: Callback, initialMs: number): Promise<void> {
  let limitMs = initialMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let expire: ((error: Error) => void) | undefined;
  const started = Date.now();
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    if (expire === undefined) return;
    const fail = expire;
    timer = setTimeout(() => fail(new Error(`Timeout of ${limitMs}ms exceeded`)), Math.max(0, limitMs - (Date.now() - started)));
  };
  const context: RunnableContext = {
    timeout(ms?: number) {
      if (ms === undefined) return limitMs;
      limitMs = ms;
      arm();
      return context;
    },
  };
  const expired = new Promise<never>((_, reject) => {
    expire = reject;
  });
  try {
    const result = fn.call(context);
    if (result !== null && typeof result === 'object' && typeof (result as Promise<unknown>).then === 'function') {
      arm();
      await Promise.race([result as Promise<unknown>, expired]);
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Installs describe/it/hooks as globals while `register` declares its suites, and returns the root suite. */
function registered(register: () => void, defaultTimeoutMs: number): Suite {
  const root = newSuite('', undefined);
  let current = root;
  const globals = globalThis as Record<string, unknown>;
  const previous = Object.fromEntries(['describe', 'it', 'before', 'after', 'beforeEach', 'afterEach'].map((name) => [name, globals[name]]));
  globals.describe = (title: string, fn: Callback): void => {
    const suite = newSuite(title, current);
    current.suites.push(suite);
    const outer = current;
    current = suite;
    try {
      const context: RunnableContext = {
        timeout(ms?: number) {
          if (ms === undefined) return timeoutIn(suite, defaultTimeoutMs);
          suite.timeoutMs = ms;
          return context;
        },
      };
      fn.call(context);
    } finally {
      current = outer;
    }
  };
  globals.it = (title: string, fn: Callback): void => void current.tests.push({ title, fn });
  globals.before = (fn: Callback): void => void current.before.push(fn);
  globals.after = (fn: Callback): void => void current.after.push(fn);
  globals.beforeEach = (fn: Callback): void => void current.beforeEach.push(fn);
  globals.afterEach = (fn: Callback): void => void current.afterEach.push(fn);
  try {
    register();
  } finally {
    Object.assign(globals, previous);
  }
  return root;
}

const countTests = (suite: Suite): number => suite.tests.length + suite.suites.reduce((sum, child) => sum + countTests(child), 0);

/** How many tests `register` declares, run nowhere: what a run of them elsewhere must pass. */
export function countBddTests(register: () => void): number {
  return countTests(registered(register, 0));
}

/** Registers the suites `register` declares (describe, it and the hooks are globals meanwhile), runs them and returns the result. */
export async function runBdd(register: () => void, { defaultTimeoutMs = 30_000 } = {}): Promise<BddResult> {
  const root = registered(register, defaultTimeoutMs);
  const started = Date.now();
  const failures: BddFailure[] = [];
  const passed: string[] = [];
  const fail = (title: string, error: unknown): void => {
    const asError = error instanceof Error ? error : new Error(String(error));
    failures.push({ title, message: asError.message, stack: asError.stack ?? asError.message });
  };
  const eachHooks = (suite: Suite, kind: 'beforeEach' | 'afterEach'): Callback[] => {
    const chain: Suite[] = [];
    for (let at: Suite | undefined = suite; at !== undefined; at = at.parent) chain.unshift(at);
    if (kind === 'afterEach') chain.reverse();
    return chain.flatMap((at) => at[kind]);
  };
  const runSuite = async (suite: Suite): Promise<void> => {
    const limit = timeoutIn(suite, defaultTimeoutMs);
    for (const hook of suite.before) {
      try {
        await runWithTimeout(hook, limit);
      } catch (error) {
        fail(`${fullTitle(suite, '')}"before all" hook (${countTests(suite)} tests not run)`, error);
        return runAfter(suite, limit);
      }
    }
    for (const test of suite.tests) {
      const title = fullTitle(suite, test.title);
      try {
        for (const hook of eachHooks(suite, 'beforeEach')) await runWithTimeout(hook, limit);
        await runWithTimeout(test.fn, limit);
        passed.push(title);
      } catch (error) {
        fail(title, error);
      }
      try {
        for (const hook of eachHooks(suite, 'afterEach')) await runWithTimeout(hook, limit);
      } catch (error) {
        fail(`${title} ("after each" hook)`, error);
      }
    }
    for (const child of suite.suites) await runSuite(child);
    await runAfter(suite, limit);
  };
  const runAfter = async (suite: Suite, limit: number): Promise<void> => {
    for (const hook of suite.after) {
      try {
        await runWithTimeout(hook, limit);
      } catch (error) {
        fail(`${fullTitle(suite, '')}"after all" hook`, error);
      }
    }
  };
  await runSuite(root);
  return { passes: passed.length, failures, suites: root.suites.map((suite) => suite.title), passed, durationMs: Date.now() - started };
}
