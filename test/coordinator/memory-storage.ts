// An in-memory coordinator log (GroupStorage) for the coordinators' state-machine tests: one list of records a
// partition of __consumer_offsets or __transaction_state, each with its offset and, for a transactional append, its
// producer id; markers are written with writeMarker(). Appends can be held, to observe a coordinator while its write
// is in flight, or answered with an error code, as a failed replicated write is.

import type { EncodedRecord } from '../../src/coordinator/group/group-records.js';
import type { AppendOptions, GroupStorage, StoredRecord } from '../../src/coordinator/group/group-storage.js';

export class MemoryStorage implements GroupStorage {
  readonly logs = new Map<number, StoredRecord[]>();
  /** While true, appends wait for release() (the leader has the records, replication has not answered). */
  hold = false;
  /** An error code every append answers with (nothing written) while not 0. */
  failWith = 0;
  private readonly held: (() => void)[] = [];

  private log(partition: number): StoredRecord[] {
    let log = this.logs.get(partition);
    if (log === undefined) this.logs.set(partition, (log = []));
    return log;
  }

  append(partition: number, records: readonly EncodedRecord[], options: AppendOptions = {}): Promise<number> {
    if (this.failWith !== 0) return Promise.resolve(this.failWith);
    const log = this.log(partition);
    const baseOffset = log.length;
    const producerId = options.producer?.producerId ?? -1;
    log.push(...records.map((r, i) => ({ ...r, offset: baseOffset + i, producerId })));
    options.onAppended?.(baseOffset);
    if (!this.hold) return Promise.resolve(0);
    return new Promise((resolve) => this.held.push(() => resolve(0)));
  }

  /** Appends a transaction marker of the producer. */
  writeMarker(partition: number, producerId: number, commit: boolean): void {
    const log = this.log(partition);
    log.push({ key: null, value: null, offset: log.length, producerId, marker: commit ? 'commit' : 'abort' });
  }

  /** Answers the held appends, in order, and stops holding. */
  release(): void {
    this.hold = false;
    for (const f of this.held.splice(0)) f();
  }

  *readAll(partition: number): Iterable<StoredRecord> {
    yield* this.logs.get(partition) ?? [];
  }
}
