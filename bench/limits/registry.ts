// The limits measured in the same run as every benchmark, in one table. A limit is a ceiling of this machine
// for one kind of work (disk with fdatasync, disk into the page cache, loopback TCP, request and response over
// loopback, a relay through the page cache, a leader and two followers through it (and acknowledging it), a null broker, reading the
// page cache), measured with the same write sizes as the broker uses, so a broker figure can be read as a
// fraction of it.
//
// To add a limit: write a module exporting a LimitDefinition and add it to `limitDefinitions`.
// The runner (measure-limits.ts) repeats it, summarises it, records it and prints it; nothing else changes.
import { diskAsyncLimit } from './disk-async-limit.js';
import { diskSyncLimit } from './disk-sync-limit.js';
import { netLimit, sinkAckedLimit, sinkLimit, tlsLimit } from './net-limit.js';
import { nullLimit } from './null-broker.js';
import { readLimit } from './read-limit.js';
import { relayLimit } from './relay-limit.js';
import { replicateAckedLimit, replicateLimit } from './replicate-limit.js';
import { rttLimit } from './rtt-limit.js';

/** What a limit gets for one repetition. */
export interface LimitContext {
  /** Time bound of one repetition; a limit may stop earlier, never much later. */
  durationMs: number;
  /** A fresh directory for this repetition's files, removed after it whatever happens. */
  workDir: string;
  /** Optional cap on the bytes a disk limit writes in one repetition (tests and small disks). */
  diskBytesMax?: number;
  /** Progress messages for the terminal (not the result file). */
  log: (message: string) => void;
}

/** One repetition's figure and what explains it (bytes, duration, why it stopped). */
export interface LimitSample {
  value: number;
  details: Record<string, unknown>;
}

export interface LimitDefinition {
  /** As in the benchmark protocol: L_disk_sync, L_disk_async, L_net, L_null; and L_sink, L_relay, L_tls,
   * L_read, L_rtt, L_replicate, L_sink_acked, L_replicate_acked. */
  name: string;
  /** Unit of `value`; MB/s are decimal (10^6 bytes per second). */
  unit: string;
  /** One line for the summary table and the result file. */
  description: string;
  measureOnce(context: LimitContext, repetition: number): Promise<LimitSample>;
  /** A short note for the summary table from the repetitions' details (how much written, why it stopped). */
  note?(details: readonly Record<string, unknown>[]): string;
}

/** Every limit, in the order they run. The disk limit without fsync runs last: it leaves writeback behind. */
export const limitDefinitions: readonly LimitDefinition[] = [
  netLimit,
  rttLimit,
  sinkLimit,
  sinkAckedLimit,
  tlsLimit,
  relayLimit,
  replicateLimit,
  replicateAckedLimit,
  nullLimit,
  readLimit,
  diskSyncLimit,
  diskAsyncLimit,
];

export function findLimit(name: string): LimitDefinition | undefined {
  return limitDefinitions.find((d) => d.name === name);
}
