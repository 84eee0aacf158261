// Leftovers of chaos runs that were killed from outside (a run that ends, passes or fails, removes its own network
// in destroy() or its exit hook; SIGKILL or a machine-wide timeout leaves no chance to). Each run's names carry its
// tag (netns.ts), so a later run can find them: namespaces `brook-chaos-<tag>-<node>`, veths `bc<tag>v<i>`, the
// bridge `bc<tag>br` and the scratch directory `<tmpdir>/brook-chaos-<tag>` (with any tmpfs mounted in it).
//
// A tag is swept only when every one of its namespaces is old (the namespace file's mtime, set when `ip netns add`
// made it) and holds no process: a run that is still going has brokers or ZooKeeper inside, and one still setting
// up is minutes old at most. Two runs may share a machine (CI's short profile beside a long run), so "not mine"
// is never reason enough.

import { readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, tryRun } from './shell.js';

const NETNS_DIR = '/run/netns';
const NAMESPACE = /^brook-chaos-([0-9a-f]{5})-\S+$/;
export const STALE_AFTER_MS = 60 * 60_000;

export interface SweepResult {
  /** Tags whose network was removed. */
  swept: string[];
  /** Tags left alone: a process inside, or too young. */
  kept: string[];
}

export interface SweepOptions {
  now?: number;
  staleAfterMs?: number;
  /** Look only at these tags (tests, so that they never touch a real run's network). */
  onlyTags?: ReadonlySet<string>;
}

/** Removes the networks (and scratch directories) of chaos runs that are gone; returns what it did. */
export async function sweepStaleChaosNetworks(options: SweepOptions = {}): Promise<SweepResult> {
  const now = options.now ?? Date.now();
  const staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS;
  const byTag = new Map<string, string[]>();
  for (const line of (await run('ip', ['netns', 'list'])).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const tag = NAMESPACE.exec(name)?.[1];
    if (tag === undefined || (options.onlyTags !== undefined && !options.onlyTags.has(tag))) continue;
    byTag.set(tag, [...(byTag.get(tag) ?? []), name]);
  }
  const result: SweepResult = { swept: [], kept: [] };
  for (const [tag, namespaces] of byTag) {
    if (await anyInUse(namespaces, now, staleAfterMs)) {
      result.kept.push(tag);
      continue;
    }
    await removeTag(tag, namespaces);
    result.swept.push(tag);
  }
  return result;
}

async function anyInUse(namespaces: readonly string[], now: number, staleAfterMs: number): Promise<boolean> {
  for (const netns of namespaces) {
    const created = mtimeMs(join(NETNS_DIR, netns));
    // No file to date it by: treat it as young rather than guess.
    if (created === null || now - created < staleAfterMs) return true;
    const pids = await tryRun('ip', ['netns', 'pids', netns]);
    if (pids.code !== 0 || pids.stdout.trim() !== '') return true;
  }
  return false;
}

async function removeTag(tag: string, namespaces: readonly string[]): Promise<void> {
  const links = (await run('ip', ['-o', 'link', 'show']))
    .split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0] ?? '')
    .filter((name) => name.startsWith(`bc${tag}v`));
  for (const veth of links) await tryRun('ip', ['link', 'del', veth]);
  for (const netns of namespaces) await tryRun('ip', ['netns', 'del', netns]);
  await tryRun('ip', ['link', 'del', `bc${tag}br`]);
  const scratch = join(tmpdir(), `brook-chaos-${tag}`);
  // A disk-full run keeps one broker's log directory on a tmpfs inside the scratch directory.
  for (const mountPoint of mountPointsUnder(scratch)) await tryRun('umount', [mountPoint]);
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}

function mountPointsUnder(dir: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((mountPoint) => mountPoint.startsWith(`${dir}/`));
}

function mtimeMs(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}
