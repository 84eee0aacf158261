// An in-memory coordinator log (GroupStorage) for the coordinators' state-machine tests: one list of records a
// partition of __consumer_offsets or __transaction_state. Appends can be held, to observe a coordinator while its
// write is in flight, or answered with an error code, as a failed replicated write is.

import type { EncodedRecord } from '../../src/coordinator/group/group-records.js';
import type { GroupStorage, StoredRecord } from '../../src/coordinator/group/group-storage.js';

export class MemoryStorage implements GroupStorage {
  readonly logs = new Map<number, StoredRecord[]>();
  /** While true, appends wait for release(). */
  hold = false;
  /** An error code every append answers with (nothing written) while not 0. */
  failWith = 0;
  private readonly held: (() => void)[] = [];

  append(partition: number, records: readonly EncodedRecord[]): Promise<number> {
    if (this.failWith !== 0) return Promise.resolve(this.failWith);
    const write = () => {
      let log = this.logs.get(partition);
      if (log === undefined) this.logs.set(partition, (log = []));
      log.push(...records);
    };
    if (!this.hold) {
      write();
      return Promise.resolve(0);
    }
    return new Promise((resolve) =>
      this.held.push(() => {
        write();
        resolve(0);
      }),
    );
  }

  /** Writes the held appends, in order, and stops holding. */
  release(): void {
    this.hold = false;
    for (const f of this.held.splice(0)) f();
  }

  *readAll(partition: number): Iterable<StoredRecord> {
    yield* this.logs.get(partition) ?? [];
  }
}
