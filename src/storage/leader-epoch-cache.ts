// The leader epoch cache of one partition: for each leader epoch, the first offset written in it. Replication
// uses it to answer OffsetForLeaderEpoch and to decide how far a follower truncates after a leader change.
//
// Persisted to `leader-epoch-checkpoint` (see checkpoint-file.ts) after every change, atomically and off the
// event loop (the first append of a new epoch would otherwise wait for two fsyncs while other partitions
// stream). The file may thus be briefly behind the log, which recovery tolerates only below the recovery
// point: so the Log moves its recovery point only after `whenPersisted`, and makes the file current
// synchronously (`persistNow`) when it loads and when it closes. An epoch with no batch (a new leader's, at its
// log end) has nothing to rebuild it from, so answers given from the cache to other brokers and clients
// (OffsetForLeaderEpoch, a fetch's diverging epoch, ListOffsets) wait while it is `persisting`, as Kafka's
// assign flushes.
// An encrypted topic's file is sealed (`seal`, see encryption/file-seal.ts). Owned by the partition's Log;
// entries are kept sorted by epoch and by start offset, both strictly increasing.

import { assert } from '../common/assert.js';
import { type LeaderEpoch, NO_LEADER_EPOCH, type Offset } from '../common/ids.js';
import { AtomicFile, StorageFormatError } from './atomic-file.js';
import { type EpochEntry, encodeEpochCheckpoint, readEpochCheckpoint } from './checkpoint-file.js';
import { type FileSeal, openWithoutKeys, UntrustedFileError } from './encryption/file-seal.js';

export const UNDEFINED_EPOCH: LeaderEpoch = NO_LEADER_EPOCH;
export const UNDEFINED_EPOCH_OFFSET = -1 as Offset;

export interface EpochEndOffset {
  readonly epoch: LeaderEpoch;
  readonly endOffset: Offset;
}

export class LeaderEpochCache {
  private entries: EpochEntry[];
  private readonly file: AtomicFile | null;
  /** While set (the log is loading), changes are only noted; `persistNow` writes them once. */
  private held = false;
  private dirty = false;
  private loadFailureValue: StorageFormatError | null = null;
  private untrustedValue: UntrustedFileError | null = null;

  /** `path` null keeps the cache in memory only (tests, simulation). Write errors go to `onError`. */
  constructor(
    path: string | null,
    entries: readonly EpochEntry[] = [],
    onError: (err: Error) => void = () => {},
    private readonly seal: FileSeal | null = null,
  ) {
    this.file = path === null ? null : new AtomicFile(path, onError);
    this.entries = [];
    for (const entry of entries) this.assignEntry(entry);
  }

  /**
   * Loads the checkpoint. A damaged file is not ignored: an empty cache would answer OffsetForLeaderEpoch with the
   * wrong end offsets after a clean shutdown (nothing is re-read to rebuild it), and followers would truncate by
   * them. As Kafka's LeaderEpochCheckpointFile, whose failed read takes the log directory offline, the cache then
   * notes `loadFailure` (the log manager takes the directory out of service) and keeps its entries in memory only,
   * so the damaged file stays as it was found, for the operator. A file an encrypting partition does not trust
   * (UntrustedFileError, see encryption/file-seal.ts) is not damage: the cache starts empty and `untrusted` tells
   * the Log to rebuild it from its batches, which replaces the file.
   */
  static load(path: string, onError?: (err: Error) => void, seal: FileSeal | null = null): LeaderEpochCache {
    try {
      const entries = readEpochCheckpoint(path, (bytes) =>
        seal === null ? openWithoutKeys(path, bytes) : seal.open(path, 'leader-epoch-checkpoint', bytes),
      );
      return new LeaderEpochCache(path, entries, onError, seal);
    } catch (err) {
      if (err instanceof UntrustedFileError) {
        const cache = new LeaderEpochCache(path, [], onError, seal);
        cache.untrustedValue = err;
        return cache;
      }
      if (!(err instanceof StorageFormatError)) throw err;
      const cache = new LeaderEpochCache(null, [], onError, seal);
      cache.loadFailureValue = err;
      return cache;
    }
  }

  /** Why `load` did not trust the checkpoint (the cache is to be rebuilt from the log), or null. */
  get untrusted(): UntrustedFileError | null {
    return this.untrustedValue;
  }

  /** Entries rebuilt from the log's batches replace those of an untrusted file (written sealed by persistNow). */
  rebuilt(entries: readonly EpochEntry[]): void {
    this.entries = [];
    for (const entry of entries) this.assignEntry(entry);
    this.untrustedValue = null;
    this.persist();
  }

  /** The damage found in the checkpoint by `load`, or null. */
  get loadFailure(): StorageFormatError | null {
    return this.loadFailureValue;
  }

  private encoded(): string | Buffer {
    const text = encodeEpochCheckpoint(this.entries);
    return this.seal === null ? text : this.seal.seal('leader-epoch-checkpoint', Buffer.from(text));
  }

  /** True while a change is not in the file yet (its background write waits or runs). */
  get persisting(): boolean {
    return this.file?.pending === true;
  }

  /** Resolves once the file holds every change made so far. */
  whenPersisted(): Promise<void> {
    return this.file === null ? Promise.resolve() : this.file.whenWritten();
  }

  /** Changes are noted but not written until `persistNow` (loading rebuilds many entries at once). */
  holdWrites(): void {
    this.held = true;
  }

  /** Makes the file current now, if a change is held or a background write is still on its way. */
  persistNow(): void {
    const due = this.dirty || this.file?.pending === true;
    this.held = false;
    this.dirty = false;
    if (due) this.file?.writeSync(this.encoded());
  }

  /** No more writes: the log's directory is going away. Resolves once a write already running has ended. */
  close(): Promise<void> {
    return this.file === null ? Promise.resolve() : this.file.close();
  }

  get epochEntries(): readonly EpochEntry[] {
    return this.entries;
  }

  get latestEpoch(): LeaderEpoch {
    return this.entries.length === 0 ? UNDEFINED_EPOCH : this.entries[this.entries.length - 1]!.epoch;
  }

  get earliestEntry(): EpochEntry | null {
    return this.entries[0] ?? null;
  }

  /**
   * Records that `epoch` starts at `startOffset`. A repeat of the latest epoch at a later offset is ignored;
   * entries that the new one contradicts (same or higher epoch, same or higher offset) are dropped first.
   */
  assign(epoch: LeaderEpoch, startOffset: Offset): void {
    if (this.assignEntry({ epoch, startOffset })) this.persist();
  }

  private assignEntry(entry: EpochEntry): boolean {
    assert(entry.epoch >= 0 && entry.startOffset >= 0, `bad epoch entry ${entry.epoch} ${entry.startOffset}`);
    const latest = this.entries[this.entries.length - 1];
    if (latest !== undefined && latest.epoch === entry.epoch && latest.startOffset <= entry.startOffset)
      return false;
    this.entries = this.entries.filter((e) => e.epoch < entry.epoch && e.startOffset < entry.startOffset);
    this.entries.push({ epoch: entry.epoch, startOffset: entry.startOffset });
    return true;
  }

  /**
   * OffsetForLeaderEpoch: the largest epoch <= requestedEpoch that this log knows, and the offset where the next
   * epoch starts (the log end offset when the requested epoch is the latest). (-1, -1) when the requested epoch
   * is unknown and newer than every entry, or undefined.
   */
  endOffsetFor(requestedEpoch: LeaderEpoch, logEndOffset: Offset): EpochEndOffset {
    const undefinedResult = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedResult;
    if (requestedEpoch === this.latestEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.entries.findIndex((e) => e.epoch > requestedEpoch);
    if (higher < 0) return undefinedResult;
    const higherStart = this.entries[higher]!.startOffset;
    if (higher === 0) return { epoch: requestedEpoch, endOffset: higherStart };
    return { epoch: this.entries[higher - 1]!.epoch, endOffset: higherStart };
  }

  /** The epoch of the entry covering `offset`, or UNDEFINED_EPOCH. */
  epochForOffset(offset: number): LeaderEpoch {
    let epoch = UNDEFINED_EPOCH;
    for (const entry of this.entries) {
      if (entry.startOffset > offset) break;
      epoch = entry.epoch;
    }
    return epoch;
  }

  /** Drops epochs starting at or after `endOffset` (the log was truncated to it). */
  truncateFromEnd(endOffset: number): void {
    const kept = this.entries.filter((e) => e.startOffset < endOffset);
    if (kept.length === this.entries.length) return;
    this.entries = kept;
    this.persist();
  }

  /**
   * Drops epochs wholly before `startOffset` (the log start moved); the epoch covering startOffset is kept and
   * now starts there.
   */
  truncateFromStart(startOffset: number): void {
    let lastBefore = -1;
    for (let i = 0; i < this.entries.length && this.entries[i]!.startOffset <= startOffset; i++)
      lastBefore = i;
    if (lastBefore < 0) return;
    const covering = this.entries[lastBefore]!;
    if (lastBefore === 0 && covering.startOffset === startOffset) return;
    this.entries = [
      { epoch: covering.epoch, startOffset: startOffset as Offset },
      ...this.entries.slice(lastBefore + 1),
    ];
    this.persist();
  }

  /** Writes the file again as it is now (sealed, if the partition now encrypts). */
  rewrite(): void {
    this.persist();
  }

  clear(): void {
    this.entries = [];
    this.persist();
  }

  private persist(): void {
    if (this.held) this.dirty = true;
    else this.file?.write(this.encoded());
  }
}
