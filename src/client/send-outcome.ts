// How each record's outcome reaches whoever sent it, exactly once: the resolve and reject functions of a send()
// promise, or one slot of a sendBatch() call, whose single promise settles when its last record does.
//
// Ownership: created by the producer when a record is accepted, held by the record's batch until the batch
// succeeds or fails for good; nothing here knows batches or partitions.

import type { RecordMetadata } from './producer.js';

/**
 * Who learns a record's outcome: the resolve and reject functions of send()'s promise, or one slot of a
 * sendBatch() call (in both lists). Functions rather than an object holding them: send() makes no object of its
 * own per record (see Producer.captureSettlers).
 */
export type OnSuccess = ((m: RecordMetadata) => void) | GroupSlot;
export type OnFailure = ((e: Error) => void) | GroupSlot;

/** One sendBatch() call: a single promise for all its records, settled when the last one is. */
export class SendGroup {
  readonly results: RecordMetadata[];
  private left: number;
  private failed = false;

  constructor(
    count: number,
    private readonly onDone: (results: RecordMetadata[]) => void,
    private readonly onError: (e: Error) => void,
  ) {
    this.results = new Array(count);
    this.left = count;
  }

  settle(index: number, m: RecordMetadata): void {
    this.results[index] = m;
    if (--this.left === 0 && !this.failed) this.onDone(this.results);
  }

  fail(e: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.onError(e);
  }
}

/** One record of a sendBatch() call: its place in the group's results. */
export class GroupSlot {
  constructor(
    private readonly group: SendGroup,
    private readonly index: number,
  ) {}

  resolve(m: RecordMetadata): void {
    this.group.settle(this.index, m);
  }

  reject(e: Error): void {
    this.group.fail(e);
  }
}

/** Tells `s` where its record was written. */
export function deliverSuccess(s: OnSuccess, metadata: RecordMetadata): void {
  if (typeof s === 'function') s(metadata);
  else s.resolve(metadata);
}

/** Tells `f` that its record failed for good. */
export function deliverFailure(f: OnFailure, err: Error): void {
  if (typeof f === 'function') f(err);
  else f.reject(err);
}
