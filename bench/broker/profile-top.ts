// `node dist/bench/broker/profile-top.js FILE.cpuprofile [N]`: the top N frames of a V8 CPU profile (what
// `broker --cpu-prof DIR` leaves), by self time and by total time (self plus callees), as percentages of the
// profile's samples. Frames are named by function, file (relative to the checkout when inside it) and line.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
}

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^file:\/\//, '').replace(repoRoot, '');
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`;
}

export function topFrames(
  profile: Profile,
  count: number,
): { self: [string, number][]; total: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const samples = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0) || 1;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const name = frameName(node);
    self.set(name, (self.get(name) ?? 0) + hits);
    // Each distinct frame on the stack gets the hits once, however often it recurses.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = frameName(byId.get(id)!);
      if (seen.has(frame)) continue;
      seen.add(frame);
      total.set(frame, (total.get(frame) ?? 0) + hits);
    }
  }
  const top = (m: Map<string, number>): [string, number][] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, hits]) => [name, (100 * hits) / samples]);
  return { self: top(self), total: top(total) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, n] = process.argv.slice(2);
  if (file === undefined) {
    console.error('usage: node dist/bench/broker/profile-top.js FILE.cpuprofile [N]');
    process.exit(2);
  }
  const { self, total } = topFrames(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(n ?? 25));
  console.log('self %   frame');
  for (const [name, pct] of self) console.log(`${pct.toFixed(1).padStart(6)}   ${name}`);
  console.log('\ntotal %  frame');
  for (const [name, pct] of total) console.log(`${pct.toFixed(1).padStart(6)}   ${name}`);
}
