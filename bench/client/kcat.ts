// kcat (librdkafka's command-line client, from the Debian package) as one more client in the client benchmarks.
// It runs as a child process, so it is timed as a whole transfer: from spawn to exit, process start, connection
// and metadata included. It has no per-record hand-over the benchmark could see, so no latency is reported for
// it, and its window is librdkafka's own (queue.buffering.max.messages, 100,000 by default), not the
// benchmark's. Its CPU is the child's user + system time, read from this process's cutime/cstime after the
// child was reaped (see childrenCpuMicros in common.ts).

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { withTempDir } from '../harness/index.js';

/** True when a `kcat` binary answers `kcat -V`. */
export async function kcatAvailable(): Promise<boolean> {
  try {
    const { code } = await runKcat(['-V']);
    return code === 0;
  } catch {
    return false;
  }
}

interface KcatExit {
  code: number | null;
  stderr: string;
}

/**
 * Runs kcat with `args`; `onStdout` sees its output as it arrives (stdout is ignored without it). Resolves when
 * the process has exited and its pipes are closed; rejects only when it cannot be started.
 */
function runKcat(args: string[], onStdout?: (chunk: Buffer) => void): Promise<KcatExit> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, {
      stdio: ['ignore', onStdout === undefined ? 'ignore' : 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      if (stderr.length < 4096) stderr += s;
    });
    if (onStdout !== undefined) child.stdout!.on('data', onStdout);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

function failed(what: string, exit: KcatExit): Error {
  return new Error(`kcat ${what} exited with ${exit.code}: ${exit.stderr.trim()}`);
}

/**
 * Produces `records` records of `payload` (which must not hold a newline) to partition 0 of `topic` with acks=all
 * and librdkafka's defaults otherwise (linger.ms 5, batch.size 1 MB). The records are written to a file first,
 * outside `timed`, and kcat reads that file itself (`-l`), so feeding it costs this process nothing.
 * `timed` wraps the spawn-to-exit part and is what the caller measures.
 */
export async function kcatProduce(
  bootstrap: string,
  topic: string,
  records: number,
  payload: Buffer,
  idempotent: boolean,
  timed: (transfer: () => Promise<void>) => Promise<void>,
): Promise<void> {
  if (payload.includes(0x0a))
    throw new Error('kcat reads newline-delimited records: no newline in the payload');
  await withTempDir(os.tmpdir(), 'brook-kcat-', async (dir) => {
    const file = join(dir, 'records');
    const line = Buffer.concat([payload, Buffer.from('\n')]);
    const all = Buffer.allocUnsafe(line.length * records);
    for (let i = 0; i < records; i++) line.copy(all, i * line.length);
    writeFileSync(file, all);
    const args = ['-P', '-q', '-b', bootstrap, '-t', topic, '-p', '0', '-X', 'acks=all'];
    args.push('-X', `enable.idempotence=${idempotent}`, '-l', file);
    await timed(async () => {
      const exit = await runKcat(args);
      if (exit.code !== 0) throw failed('-P', exit);
    });
  });
}

/** When kcat's output showed the first and the last record, and how many it printed. */
export interface KcatConsumed {
  startedAt: number;
  firstAt: number;
  lastAt: number;
  count: number;
}

/**
 * Reads `records` records of partition 0 of `topic` from the beginning and exits (`-c`), printing one offset per
 * record (`-f '%o\n'`, a few bytes, so reading its output costs this process little). kcat consumes the
 * partition directly (no group): its figure from start to the first record has no group join in it. Output is
 * block-buffered by kcat's stdio, so the first chunk arrives a few hundred records after the first record.
 */
export async function kcatConsume(bootstrap: string, topic: string, records: number): Promise<KcatConsumed> {
  const args = ['-C', '-q', '-b', bootstrap, '-t', topic, '-p', '0', '-o', 'beginning'];
  args.push('-c', String(records), '-f', '%o\\n');
  const seen: KcatConsumed = { startedAt: performance.now(), firstAt: 0, lastAt: 0, count: 0 };
  const exit = await runKcat(args, (chunk) => {
    if (seen.firstAt === 0) seen.firstAt = performance.now();
    seen.lastAt = performance.now();
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 0x0a) seen.count++;
  });
  if (exit.code !== 0) throw failed('-C', exit);
  if (seen.count !== records) throw new Error(`kcat -C printed ${seen.count} records, expected ${records}`);
  return seen;
}
