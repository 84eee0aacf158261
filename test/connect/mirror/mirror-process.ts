// Runs `bin/brook mirror-maker` as a process for the mirror tests: writes mm2.properties, waits for
// "MirrorMaker started". stop() is SIGTERM, kill() SIGKILL; both end only this process, by its PID.

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { propertiesText } from '../../helpers/connect-worker.js';
import { waitUntil } from '../../helpers/wait.js';

const BROOK = resolve(import.meta.dirname, '../../../../bin/brook');

export interface MirrorProcess {
  readonly pid: number;
  output(): string;
  /** Resolves with the exit code once the process has ended on its own (or been stopped). */
  exited(): Promise<number | null>;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

export function writeMm2(dir: string, props: Record<string, string | number | boolean>): string {
  const file = join(dir, `mm2-${Date.now()}-${Math.random().toString(36).slice(2)}.properties`);
  writeFileSync(file, propertiesText(props));
  return file;
}

/** Starts `brook mirror-maker file`, with `env` added to this process's environment. */
export async function startMirrorMaker(
  file: string,
  env: Record<string, string> = {},
): Promise<MirrorProcess> {
  const child: ChildProcess = spawn(process.execPath, [BROOK, 'mirror-maker', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      exitCode = code;
      r(code);
    }),
  );
  const handle: MirrorProcess = {
    pid: child.pid!,
    output: () => out,
    exited: () => exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    await waitUntil(
      () => /MirrorMaker started/.test(out) || exitCode !== undefined,
      60_000,
      () => `mirror-maker output:\n${out}`,
    );
  } catch (e) {
    await handle.kill();
    throw e;
  }
  if (exitCode !== undefined) throw new Error(`mirror-maker exited with ${exitCode}:\n${out}`);
  return handle;
}

/** `brook mirror-maker FILE --status`: its stdout. */
export function mirrorStatus(file: string): string {
  const r = spawnSync(process.execPath, [BROOK, 'mirror-maker', file, '--status'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`--status exited ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

export interface TwoClusters {
  /** Source alias (`A` unless given) and its bootstrap servers. */
  source?: string;
  sourceBootstrap: string;
  /** Target alias (`B` unless given) and its bootstrap servers. */
  target?: string;
  targetBootstrap: string;
  /** The flow's `topics` regexes. */
  topics: string;
}

/**
 * Writes the mm2.properties the mirror tests share: one enabled flow source->target of `topics` between two
 * single-broker clusters, so replication factor 1 for the remote topics and the internal ones; `extra` adds or
 * overrides keys (the test's own settings).
 */
export function writeTwoClusterMm2(
  dir: string,
  c: TwoClusters,
  extra: Record<string, string | number | boolean> = {},
): string {
  const source = c.source ?? 'A';
  const target = c.target ?? 'B';
  return writeMm2(dir, {
    clusters: `${source}, ${target}`,
    [`${source}.bootstrap.servers`]: c.sourceBootstrap,
    [`${target}.bootstrap.servers`]: c.targetBootstrap,
    [`${source}->${target}.enabled`]: true,
    [`${source}->${target}.topics`]: c.topics,
    'replication.factor': 1,
    'offset-syncs.topic.replication.factor': 1,
    'heartbeats.topic.replication.factor': 1,
    'checkpoints.topic.replication.factor': 1,
    'offset.storage.replication.factor': 1,
    ...extra,
  });
}
