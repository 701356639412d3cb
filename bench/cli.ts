// Command-line flags of `npm run bench`, parsed by hand from process.argv:
//   --quick          short measurements, for a smoke run
//   --runs N         repeat the throughput measurements N times and report medians
//   --only TEXT      run only the contenders / scenarios whose name contains TEXT
//   --duration MS    length of one throughput measurement (default 2000, 400 with --quick),
//                    cut into 16 slices (2 with --quick) interleaved with the other contenders'
//   --help

/** What one `npm run bench` invocation was asked to do. */
export interface BenchOptions {
  readonly quick: boolean;
  readonly runs: number;
  readonly only: string | undefined;
  /** One throughput measurement, in ms. */
  readonly durationMs: number;
  /** Slices one throughput measurement is cut into, interleaved across contenders. */
  readonly slices: number;
  /** Warm-up before each throughput measurement, in ms. */
  readonly warmupMs: number;
  /** One bytes-per-decision measurement, in ms. */
  readonly bytesDurationMs: number;
  /** Ids in the in-process heap measurement (reported per million). */
  readonly heapIds: number;
}

export const USAGE = `Usage: npm run bench -- [--quick] [--runs N] [--only TEXT] [--duration MS]

  --quick        short measurements (0.4 s each), for a smoke run
  --runs N       repetitions of the throughput measurements; medians are reported (default 1)
  --only TEXT    only contenders or scenarios whose name contains TEXT (case-insensitive)
  --duration MS  length of one throughput measurement in ms (default 2000)`;

function positiveInteger(flag: string, value: string | undefined): number {
  const parsed = Number(value);
  if (value === undefined || !Number.isSafeInteger(parsed) || parsed < 1) {
    throw new TypeError(`${flag} expects a positive integer, got ${value === undefined ? 'nothing' : `\`${value}\``}\n\n${USAGE}`);
  }
  return parsed;
}

/** Parses the flags after `tsx bench/run.ts`; throws a TypeError with the usage on a bad flag. */
export function parseArgs(argv: readonly string[]): BenchOptions | 'help' {
  let quick = false;
  let runs = 1;
  let only: string | undefined;
  let duration: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--quick':
        quick = true;
        break;
      case '--runs':
        runs = positiveInteger('--runs', value());
        break;
      case '--only': {
        const text = value();
        if (text === undefined || text === '') throw new TypeError(`--only expects some text\n\n${USAGE}`);
        only = text.toLowerCase();
        break;
      }
      case '--duration':
        duration = positiveInteger('--duration', value());
        break;
      case '--help':
      case '-h':
        return 'help';
      default:
        throw new TypeError(`Unknown argument \`${arg}\`\n\n${USAGE}`);
    }
  }
  const durationMs = duration ?? (quick ? 400 : 2000);
  return {
    quick,
    runs,
    only,
    durationMs,
    slices: quick ? 2 : 16,
    warmupMs: quick ? 100 : 300,
    bytesDurationMs: quick ? 200 : 800,
    heapIds: quick ? 100_000 : 1_000_000,
  };
}

/** Whether a name passes `--only`. */
export function selected(options: BenchOptions, ...names: string[]): boolean {
  return options.only === undefined || names.some((name) => name.toLowerCase().includes(options.only as string));
}
