// The readable report of a chaos run (report.md in the run directory): the run's settings and verdict, every
// fault in the order it was injected and healed, each checker's counts, and for each anomaly (the first few of
// each kind) the smallest window of history that shows it: the ops that prove it and the nemesis events from
// shortly before the first of them to shortly after the last.

import { writeFileSync } from 'node:fs';
import type { CheckResult } from './checker.js';
import type { Op } from './history.js';
import { leadersOutsideIsr, staleLeaderViews } from './liveness.js';

export interface RunSummary {
  seed: number;
  profile: string;
  workload: string;
  brokers: number;
  uncleanLeaderElection: boolean;
  minInsyncReplicas: number;
  tag: string;
  startedAt: string;
  durationMs: number;
  faults: string[];
  /** The --faults argument, when the run used a subset of the fault kinds. */
  faultsArg: string | null;
  verdict: 'valid' | 'anomalies' | 'unknown';
  /** Anomalies are expected (unclean leader election) and measured rather than failing the run. */
  anomaliesExpected: boolean;
  anomalyCounts: Record<string, number>;
  notes: string[];
}

const ANOMALIES_SHOWN_PER_KIND = 5;
const WINDOW_BEFORE_MS = 15_000;
const WINDOW_AFTER_MS = 5_000;
const VALUE_CHARS_MAX = 240;

export function writeReport(
  path: string,
  summary: RunSummary,
  history: readonly Op[],
  results: CheckResult[],
): void {
  const lines: string[] = [];
  lines.push(
    `# Chaos run, seed ${summary.seed}, profile ${summary.profile}, workload ${summary.workload}`,
    '',
  );
  lines.push(
    `- verdict: **${summary.verdict}**${summary.anomaliesExpected ? ' (unclean leader election on: loss is measured, not failed)' : ''}`,
  );
  lines.push(`- anomalies: ${formatCounts(summary.anomalyCounts)}`);
  lines.push(
    `- brokers: ${summary.brokers}, unclean.leader.election.enable=${summary.uncleanLeaderElection}, min.insync.replicas=${summary.minInsyncReplicas}, rf=3`,
  );
  lines.push(
    `- started ${summary.startedAt}, took ${(summary.durationMs / 1000).toFixed(0)} s, run tag ${summary.tag}`,
  );
  lines.push(
    `- replay: \`npm run chaos -- --seed ${summary.seed} --profile ${summary.profile}${summary.workload !== 'queue' ? ` --workload ${summary.workload}` : ''}${summary.brokers !== 3 ? ` --brokers ${summary.brokers}` : ''}${summary.uncleanLeaderElection ? ' --unclean' : ''}${summary.minInsyncReplicas !== 2 ? ` --min-isr ${summary.minInsyncReplicas}` : ''}${summary.faultsArg === null ? '' : ` --faults ${summary.faultsArg}`}\``,
  );
  for (const note of summary.notes) lines.push(`- note: ${note}`);
  lines.push('', '## Faults', '', '| time (s) | event |', '| ---: | --- |');
  for (const op of history) {
    if (op.process !== 'nemesis' || op.type === 'invoke') continue;
    lines.push(`| ${(op.time / 1000).toFixed(1)} | ${nemesisText(op)} |`);
  }
  const stale = staleLeaderViews(history);
  if (stale.length > 0) {
    lines.push(
      '',
      '## Liveness',
      '',
      'Consumers whose metadata named a broker as leader that the cluster no longer did (they fetch from it):',
      '',
    );
    for (const line of stale) lines.push(`- ${line}`);
  }
  const unclean = leadersOutsideIsr(history);
  if (unclean.length > 0) {
    lines.push('', '## Leaders from outside the ISR (unclean elections)', '');
    for (const e of unclean) lines.push(`- ${e.text}`);
  }
  lines.push('', '## Checkers', '');
  for (const r of results) {
    const verdict = r.valid === null ? `unknown (${r.unknown})` : r.valid ? 'valid' : 'ANOMALIES';
    lines.push(`### ${r.checker}: ${verdict}`, '');
    lines.push(
      `- ${Object.entries(r.stats)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    );
    if (r.anomalies.length > 0) lines.push(`- anomalies: ${formatCounts(countKinds(r))}`);
    lines.push('');
    const shown = new Map<string, number>();
    for (const a of r.anomalies) {
      const n = shown.get(a.kind) ?? 0;
      if (n >= ANOMALIES_SHOWN_PER_KIND) continue;
      shown.set(a.kind, n + 1);
      lines.push(`#### ${a.kind}: ${a.description}`, '', '```');
      for (const op of windowOf(history, a.opIndexes)) lines.push(opText(op));
      lines.push('```', '');
    }
    for (const [kind, n] of Object.entries(countKinds(r)))
      if (n > ANOMALIES_SHOWN_PER_KIND)
        lines.push(`(${n - ANOMALIES_SHOWN_PER_KIND} more ${kind} anomalies in summary.json)`, '');
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

function countKinds(r: CheckResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of r.anomalies) counts[a.kind] = (counts[a.kind] ?? 0) + 1;
  return counts;
}

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} ${v}`).join(', ');
}

/** The ops that prove an anomaly plus the nemesis events around them, in history order. */
function windowOf(history: readonly Op[], indexes: readonly number[]): Op[] {
  const proof = new Set(indexes);
  const times = indexes.map((i) => history[i]!.time);
  const from = Math.min(...times) - WINDOW_BEFORE_MS;
  const to = Math.max(...times) + WINDOW_AFTER_MS;
  return history.filter(
    (op) =>
      proof.has(op.index) ||
      (op.process === 'nemesis' && op.type !== 'invoke' && op.time >= from && op.time <= to),
  );
}

function nemesisText(op: Op): string {
  const v = (op.value ?? {}) as Record<string, unknown>;
  const what = typeof v.description === 'string' ? v.description : op.f;
  const target =
    v.target !== undefined && !String(what).includes(String(v.target)) ? ` -> ${String(v.target)}` : '';
  const status = op.type === 'ok' ? '' : ` (${op.type}${op.error ? `: ${op.error}` : ''})`;
  return `${op.f.startsWith('stop-') ? `healed ${op.f.slice(5)}` : what}${target}${status}`.replaceAll(
    '|',
    '/',
  );
}

export function opText(op: Op): string {
  let value = op.value === undefined ? '' : JSON.stringify(op.value);
  if (value.length > VALUE_CHARS_MAX) value = `${value.slice(0, VALUE_CHARS_MAX)}... (${value.length} chars)`;
  const error = op.error ? ` ${op.error}` : '';
  return `${(op.time / 1000).toFixed(3).padStart(9)}s #${op.index} ${op.process} ${op.type} ${op.f} ${value}${error}`;
}
