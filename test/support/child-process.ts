// Runs a TypeScript program of the tests in a child `node` process under
// `--unhandled-rejections=strict`, so that a rejection nobody handled crashes
// it as it would crash a user's service, bounded in time (killed by its own
// PID past the limit), with what it printed and how it ended.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How a child ended and what it printed. */
export interface ChildRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** From spawn to exit. */
  readonly totalMs: number;
  /** From the last stdout output to exit. */
  readonly lingerMs: number;
  /** True when it was still running at the limit and was killed. */
  readonly killed: boolean;
}

/** A running child. */
export interface Child {
  /** Resolves with the next line the child prints on stdout (or '' once it has exited). */
  nextLine(): Promise<string>;
  /** Writes one line to the child's stdin. */
  send(line: string): void;
  /** Closes the child's stdin. */
  closeInput(): void;
  /** Resolves once the child has exited. */
  readonly exited: Promise<ChildRun>;
}

/** What runs a child's script, when it is not Node. */
export interface ChildRuntime {
  /** The executable and the arguments that go before the script, e.g. Bun's binary and its `--preload`. */
  readonly command: readonly [string, ...string[]];
  /** The child's environment; default this process's. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Starts `node --unhandled-rejections=strict --import tsx <script> ...args`
 * (or `runtime`'s command with the script and args) from the repository root.
 *
 * @param script The program, relative to test/support.
 * @param limitMs A child still running after this long is SIGKILLed (its own PID) and reported `killed`.
 */
export function startChild(script: string, args: readonly string[], limitMs: number, runtime?: ChildRuntime): Child {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const startedAt = performance.now();
  const [command, ...before] = runtime?.command ?? [process.execPath, '--unhandled-rejections=strict', '--import', 'tsx'];
  const child = spawn(command, [...before, path, ...args], { cwd: REPO_ROOT, env: runtime?.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let pendingLine = '';
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let lastOutputAt = startedAt;
  let killed = false;
  let ended = false;
  child.stdin.on('error', () => {}); // the child may exit before reading
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    lastOutputAt = performance.now();
    pendingLine += chunk;
    let newline = pendingLine.indexOf('\n');
    while (newline >= 0) {
      const line = pendingLine.slice(0, newline);
      pendingLine = pendingLine.slice(newline + 1);
      const waiter = waiters.shift();
      if (waiter === undefined) lines.push(line);
      else waiter(line);
      newline = pendingLine.indexOf('\n');
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const killer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL'); // this child's own PID
  }, limitMs);
  const exited = new Promise<ChildRun>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(killer);
      ended = true;
      for (const waiter of waiters.splice(0)) waiter('');
      const exitedAt = performance.now();
      resolve({ code, signal, stdout, stderr, totalMs: exitedAt - startedAt, lingerMs: exitedAt - lastOutputAt, killed });
    });
  });
  return {
    nextLine: () => {
      const line = lines.shift();
      if (line !== undefined || ended) return Promise.resolve(line ?? '');
      return new Promise((resolve) => waiters.push(resolve));
    },
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    closeInput: () => {
      child.stdin.end();
    },
    exited,
  };
}

/** Runs a child to its end; see {@link startChild}. */
export function runChild(script: string, args: readonly string[], limitMs: number): Promise<ChildRun> {
  const child = startChild(script, args, limitMs);
  child.closeInput();
  return child.exited;
}

/** The last line a child printed, parsed as JSON. */
export function lastJsonLine<T>(run: ChildRun): T {
  const lastLine = run.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(lastLine) as T;
}
