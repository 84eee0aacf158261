// `npm run chaos -- [--seed N] [--profile short|long] [--workload queue|txn|streams] [--brokers 3..5] [--unclean] [--min-isr 1..3] [--faults k1,k2] [--out DIR]`
// Runs one chaos run (see run.ts) as root and exits 0 when the checkers found nothing (or when unclean leader
// election is on, where loss is expected and only measured), 1 on anomalies, 2 when the run could not decide.

import { FAULT_KINDS, type FaultKind, isFaultKind, OPT_IN_FAULT_KINDS } from './nemesis.js';
import { DEFAULT_OUT_DIR, runChaos, WORKLOADS, type WorkloadName } from './run.js';

function parse(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    if (name === 'unclean' || name === 'help') out.set(name, 'true');
    else out.set(name, inline ?? argv[++i] ?? '');
  }
  return out;
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  if (args.has('help')) {
    console.log(
      `usage: npm run chaos -- [--seed N] [--profile short|long] [--workload ${WORKLOADS.join('|')}] [--brokers 3..5] [--unclean] [--min-isr 1..3] [--faults ${[...FAULT_KINDS, ...OPT_IN_FAULT_KINDS].join(',')}] [--out DIR]`,
    );
    return 0;
  }
  if (process.getuid?.() !== 0) {
    console.error('the chaos harness makes network namespaces and iptables rules: run it as root');
    return 2;
  }
  const seed = args.has('seed') ? Number(args.get('seed')) : Math.floor(Math.random() * 1_000_000);
  if (!Number.isSafeInteger(seed)) throw new Error('--seed: an integer');
  const faults = args.has('faults') ? (args.get('faults')!.split(',') as FaultKind[]) : [...FAULT_KINDS];
  for (const f of faults) if (!isFaultKind(f)) throw new Error(`unknown fault ${f}`);
  const { summary } = await runChaos({
    seed,
    profile: args.get('profile') ?? 'short',
    workload: (args.get('workload') ?? 'queue') as WorkloadName,
    brokers: Number(args.get('brokers') ?? 3),
    uncleanLeaderElection: args.has('unclean'),
    minInsyncReplicas: Number(args.get('min-isr') ?? 2),
    faults,
    outDir: args.get('out') ?? DEFAULT_OUT_DIR,
  });
  if (summary.verdict === 'unknown') return 2;
  if (summary.verdict === 'anomalies' && !summary.anomaliesExpected) return 1;
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
