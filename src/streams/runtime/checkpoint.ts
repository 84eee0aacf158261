// A task's checkpoint file, `<state.dir>/<application.id>/<task id>/.checkpoint`, in Kafka's OffsetCheckpoint
// format: a version line (0), a count line, then one "topic partition offset" line per changelog partition,
// where offset is the last changelog offset the task's persistent stores hold. It is written through a
// temporary file and a rename, so a crash leaves the old file or the new one, never a torn one. A restart
// restores each store from the offset after its checkpoint instead of from the changelog's beginning.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { partitionKey, topicPartitionOfKey } from './partition-key.js';

const VERSION = 0;
export const CHECKPOINT_FILE = '.checkpoint';

export function checkpointPath(taskDir: string): string {
  return join(taskDir, CHECKPOINT_FILE);
}

/** "topic:partition" -> offset; empty when there is no file or it cannot be read (then the store is rebuilt). */
export function readCheckpoint(taskDir: string): Map<string, number> {
  const path = checkpointPath(taskDir);
  const out = new Map<string, number>();
  if (!existsSync(path)) return out;
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  if (lines[0] !== String(VERSION)) return out;
  const count = Number(lines[1]);
  if (!Number.isInteger(count) || lines.length - 2 !== count) return out;
  for (const line of lines.slice(2)) {
    const parts = line.split(' ');
    if (parts.length !== 3) return new Map();
    const offset = Number(parts[2]);
    if (!Number.isSafeInteger(offset) || offset < 0) return new Map();
    out.set(partitionKey({ topic: parts[0]!, partition: Number(parts[1]) }), offset);
  }
  return out;
}

export function writeCheckpoint(taskDir: string, offsets: Map<string, number>): void {
  const path = checkpointPath(taskDir);
  mkdirSync(dirname(path), { recursive: true });
  let text = `${VERSION}\n${offsets.size}\n`;
  for (const [tp, offset] of offsets) {
    const { topic, partition } = topicPartitionOfKey(tp);
    text += `${topic} ${partition} ${offset}\n`;
  }
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export function deleteCheckpoint(taskDir: string): void {
  rmSync(checkpointPath(taskDir), { force: true });
}

/**
 * Task id -> the sum of the changelog offsets in its checkpoint, for every task directory of an application's
 * state directory that has one (Kafka's task offset sums, sent to the streams assignor so it can place a task
 * where its state is). The offsets are added as they are, the last offset each store holds, as Kafka's
 * TaskManager sums them: the same sum a running standby reports for the same state, so a caught-up task lags
 * its changelogs' end offsets by one per partition, as in Kafka.
 */
export function taskOffsetSums(appDir: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync(appDir)) return out;
  for (const name of readdirSync(appDir)) {
    if (!/^\d+_\d+$/.test(name)) continue;
    const offsets = readCheckpoint(join(appDir, name));
    if (offsets.size === 0) continue;
    let sum = 0;
    for (const o of offsets.values()) sum += o;
    out.set(name, sum);
  }
  return out;
}
