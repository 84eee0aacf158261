// The instance's process id, kept across restarts as Kafka Streams 3.x keeps it: in
// `<state.dir>/<application.id>/kafka-streams-process-metadata`, a JSON object `{"processId": "<uuid>"}`. Under
// exactly-once it is part of the threads' transactional.id, so a restarted instance takes its old transactional
// ids back (fencing a zombie of its last run at once, instead of waiting for its transactions to time out).
//
// Kafka locks the state directory against a second instance; Brook instead hands an instance of this process a
// fresh id when another live instance here already holds the directory's, so that two instances never share
// transactional ids. A file that cannot be read is replaced by a fresh id (what it held cannot be trusted).

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PROCESS_METADATA_FILE = 'kafka-streams-process-metadata';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Process ids held by the live KafkaStreams instances of this process. */
const held = new Set<string>();

function readProcessId(file: string): string | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { processId?: unknown };
    return typeof parsed.processId === 'string' && UUID.test(parsed.processId) ? parsed.processId : null;
  } catch {
    return null;
  }
}

/** The application's process id in `appDir` (created if missing), held until release(). */
export function acquireProcessId(appDir: string, log: (m: string) => void): string {
  const file = join(appDir, PROCESS_METADATA_FILE);
  const saved = readProcessId(file);
  if (saved !== null && !held.has(saved)) {
    held.add(saved);
    return saved;
  }
  const id = randomUUID();
  held.add(id);
  if (saved !== null) {
    log(
      `state directory ${appDir} is in use by another instance of this process: process id ${id} for this one`,
    );
    return id;
  }
  mkdirSync(appDir, { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify({ processId: id }));
  renameSync(tmp, file);
  return id;
}

export function releaseProcessId(id: string): void {
  held.delete(id);
}
