// `node dist/bench/broker/gc-top.js DIR [N]`: what `broker --gc-prof DIR` left, per broker. From the
// `--trace-gc --trace-incremental-marking` log: how many scavenges and mark-compacts, the mark-compacts' pauses
// (median and largest, main thread, milliseconds) and why incremental marking started (V8's reason: "task" is
// the old generation's soft limit, "external memory pressure" is ArrayBuffer memory). From the heap profile: the
// top N allocation sites of promoted objects (see gc-probe.ts) by bytes sampled, and their stacks.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** Frames of a stack shown, innermost first. */
const stackDepth = 5;

function frameName(node: HeapNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^file:\/\//, '').replace(repoRoot, '');
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
}

/** Sampled bytes by allocating frame and by its innermost stack, as shares of all sampled bytes. */
export function promotedSites(
  head: HeapNode,
  count: number,
): { totalBytes: number; sites: [string, number][]; stacks: [string, number][] } {
  const sites = new Map<string, number>();
  const stacks = new Map<string, number>();
  let totalBytes = 0;
  const walk = (node: HeapNode, path: string[]): void => {
    const here = [...path, frameName(node)];
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      sites.set(here.at(-1)!, (sites.get(here.at(-1)!) ?? 0) + node.selfSize);
      const stack = here.slice(-stackDepth).reverse().join(' < ');
      stacks.set(stack, (stacks.get(stack) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, []);
  const top = (m: Map<string, number>): [string, number][] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, bytes]) => [name, (100 * bytes) / (totalBytes || 1)]);
  return { totalBytes, sites: top(sites), stacks: top(stacks) };
}

export interface GcSummary {
  scavenges: number;
  markCompacts: number;
  markCompactPauseMs: number[];
  /** Incremental marking starts by V8's reason. */
  markingStarts: Map<string, number>;
}

export function summarizeGcLog(text: string): GcSummary {
  const summary: GcSummary = {
    scavenges: 0,
    markCompacts: 0,
    markCompactPauseMs: [],
    markingStarts: new Map(),
  };
  for (const line of text.split('\n')) {
    if (/: Scavenge /.test(line)) summary.scavenges++;
    const mc = /: Mark-Compact .*? MB, ([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (mc) {
      summary.markCompacts++;
      summary.markCompactPauseMs.push(Number(mc[1]));
    }
    const start = /\[IncrementalMarking\] Start \(([^)]*)\)/.exec(line);
    if (start) summary.markingStarts.set(start[1]!, (summary.markingStarts.get(start[1]!) ?? 0) + 1);
  }
  return summary;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, n] = process.argv.slice(2);
  if (dir === undefined) {
    console.error('usage: node dist/bench/broker/gc-top.js DIR [N]');
    process.exit(2);
  }
  const files = readdirSync(dir).sort();
  for (const file of files.filter((f) => f.endsWith('.gc.log'))) {
    const s = summarizeGcLog(readFileSync(join(dir, file), 'utf8'));
    const starts = [...s.markingStarts].map(([reason, k]) => `${reason} ${k}`).join(', ') || 'none';
    console.log(
      `${file}: ${s.scavenges} scavenges, ${s.markCompacts} mark-compacts (pause median ` +
        `${median(s.markCompactPauseMs).toFixed(1)} ms, max ${Math.max(0, ...s.markCompactPauseMs).toFixed(1)} ms); ` +
        `incremental marking started by: ${starts}`,
    );
  }
  for (const file of files.filter((f) => f.endsWith('.heapprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { head: HeapNode };
    const { totalBytes, sites, stacks } = promotedSites(profile.head, Number(n ?? 20));
    console.log(
      `\n${file}: ${(totalBytes / 1048576).toFixed(1)} MiB sampled that survived scavenges\nshare %  site`,
    );
    for (const [name, pct] of sites) console.log(`${pct.toFixed(1).padStart(6)}   ${name}`);
    console.log('share %  stack (innermost first)');
    for (const [name, pct] of stacks) console.log(`${pct.toFixed(1).padStart(6)}   ${name}`);
  }
}
