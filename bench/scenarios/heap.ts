// Measure 6, heap part: runs bench/memory-heap.ts in a child `node
// --expose-gc --import tsx` per contender (fresh heap each) and collects the
// JSON line each prints.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HeapReport } from '../memory-heap.js';

export type HeapRecord = (HeapReport & { readonly error?: undefined }) | { readonly contender: string; readonly error: string };

const SCRIPT = fileURLToPath(new URL('../memory-heap.ts', import.meta.url));
const CHILD_TIMEOUT_MS = 240_000;

function runChild(contender: string, ids: number): Promise<HeapReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=4096', '--import', 'tsx', SCRIPT, contender, String(ids)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`memory-heap ${contender} exited with ${code ?? signal}: ${err.trim().slice(-500)}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as HeapReport);
      } catch (error) {
        reject(new Error(`memory-heap ${contender} printed no report: ${out.slice(0, 200)}`, { cause: error }));
      }
    });
  });
}

/** Heap per million ids for each in-memory contender, one child process each, one after another. */
export async function measureHeap(contenders: readonly string[], ids: number, log: (line: string) => void): Promise<HeapRecord[]> {
  const records: HeapRecord[] = [];
  for (const contender of contenders) {
    try {
      const report = await runChild(contender, ids);
      records.push(report);
      const second = report.heapPerMillionIdsAfterSecondWave;
      log(`  heap ${contender.padEnd(12)} ${(report.heapPerMillionIds / 2 ** 20).toFixed(1)} MiB per 1M ids${second === undefined ? '' : `, ${(second / 2 ** 20).toFixed(1)} MiB after a second wave`}`);
    } catch (error) {
      records.push({ contender, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return records;
}
