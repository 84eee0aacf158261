// The chaos harness's short profile as a slow test: a ZooKeeper and three brokers in network namespaces, about
// 95 s of seeded faults (kills, pauses, partitions, slow and lossy links, ZooKeeper restarts, a full disk)
// under the queue workload, then the checkers: with unclean leader election off, min.insync.replicas=2 and
// rf=3, no acknowledged write may be lost, duplicated, reordered or seen at two offsets, and no committed
// offset may pass a record the group was not delivered. A second run puts the transactional read-process-write
// workload under the same kind of schedule: every input record exactly once in the read_committed output, no
// aborted or dirty read. A third runs two Brook Streams instances (child processes, one killed with SIGKILL
// and started again every 20-30 s) counting the input per key under exactly_once_v2: each key's counts in the
// committed output exactly 1..n. Needs root (namespaces, iptables); skipped otherwise. BROOK_CHAOS_SEED picks the seed
// (default 1); the run directory named in a failure has the report.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FAULT_KINDS } from './nemesis.js';
import { DEFAULT_OUT_DIR, runChaos, type WorkloadName } from './run.js';

function canMakeNamespaces(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = spawnSync('iptables', ['--version'], { timeout: 5_000 });
  return probe.status === 0;
}

const skip = canMakeNamespaces() ? false : 'needs root and iptables';

/** The lines of the fault table and the first anomalies: a CI log shows them when the run directory is gone. */
const EXCERPT_LINES_MAX = 120;

function reportExcerpt(runDir: string): string {
  let text: string;
  try {
    text = readFileSync(join(runDir, 'report.md'), 'utf8');
  } catch {
    return '(no report.md)';
  }
  const faults = text.indexOf('## Faults');
  const firstAnomaly = text.indexOf('#### ');
  const liveness = text.indexOf('## Liveness');
  const parts = [
    faults < 0 ? '' : text.slice(faults, liveness > faults ? liveness : undefined),
    firstAnomaly < 0 ? '' : text.slice(firstAnomaly),
  ];
  return parts.join('\n').split('\n').slice(0, EXCERPT_LINES_MAX).join('\n');
}

/** One short run of `workload` with the seed of BROOK_CHAOS_SEED (default 1): no anomaly, and a verdict. */
async function shortRunIsValid(workload: WorkloadName): Promise<void> {
  const seed = Number(process.env.BROOK_CHAOS_SEED ?? 1);
  const { runDir, summary } = await runChaos({
    seed,
    profile: 'short',
    workload,
    brokers: 3,
    uncleanLeaderElection: false,
    faults: FAULT_KINDS,
    outDir: DEFAULT_OUT_DIR,
    log: () => {},
  });
  assert.deepEqual(
    summary.anomalyCounts,
    {},
    `anomalies (seed ${seed}, ${workload}); see ${runDir}/report.md\n${reportExcerpt(runDir)}`,
  );
  assert.equal(
    summary.verdict,
    'valid',
    `seed ${seed}, ${workload}: ${summary.notes.join('; ')}; see ${runDir}/report.md`,
  );
}

test(
  'short chaos run: nothing acknowledged is lost, duplicated, reordered or moved, committed offsets stay delivered',
  {
    skip,
  },
  () => shortRunIsValid('queue'),
);

test(
  'short chaos run, transactional read-process-write: every input exactly once in the committed output',
  {
    skip,
  },
  () => shortRunIsValid('txn'),
);

test(
  'short chaos run, Kafka Streams count under exactly_once_v2 with instances killed: each key counts 1..n once',
  {
    skip,
  },
  () => shortRunIsValid('streams'),
);
