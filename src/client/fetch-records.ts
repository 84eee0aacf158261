// Which records of a fetched partition a consumer delivers: those at or after the fetch offset (a compressed
// batch may start earlier), never control records, and under read_committed none of an aborted transaction.
// Pure functions of the fetched bytes, so the isolation rules are tested without a transactional broker.
//
// read_committed follows Kafka's fetcher: the response lists aborted transactions (producer id, first offset);
// a producer becomes "aborted" once the batches reach its first offset, its transactional batches are dropped
// until its ABORT marker, and the marker ends it.
//
// Decoding is lazy: `FetchedRecords` walks only the batch headers when a response arrives (checking CRCs, finding
// the next fetch offset and which batches to deliver), so the next fetch can leave at once; records are decoded
// straight from the response buffer into the caller's objects when they are taken, a batch at a time (keys and
// values are views of the response, not copies).

import { BatchFaultError, batchFault } from '../protocol/records/batch-fault.js';
import { Attribute, batchHeader } from '../protocol/records/batch-header.js';
import type { BatchRecord } from '../protocol/records/batch-records.js';
import { batchRecordsSection, readRecords } from '../protocol/records/batch-records.js';
import { ControlRecordType } from '../protocol/records/control-record.js';
import { decodeRecordsBlob } from '../protocol/records/decode-records-blob.js';
import type { RecordHeader } from '../protocol/records/record.js';
import { RecordsCursor } from '../protocol/records/records-cursor.js';
import { validateBatch } from '../protocol/records/validate-batch.js';
import { readVarint, readVarlong, varintEnd } from '../protocol/records/varint.js';
import { epochOrNone } from './requests.js';

export interface AbortedTransaction {
  producerId: bigint | number;
  firstOffset: bigint | number;
}

/** Builds the caller's record object from one decoded record (key, value and header values are views). */
export type RecordFactory<T> = (
  offset: number,
  timestamp: number,
  key: Buffer | null,
  value: Buffer | null,
  headers: RecordHeader[],
) => T;

function sortedAborted(aborted: readonly AbortedTransaction[] | null) {
  return (aborted ?? [])
    .map((a) => ({ producerId: Number(a.producerId), firstOffset: Number(a.firstOffset) }))
    .sort((a, b) => a.firstOffset - b.firstOffset);
}

function isAbortMarker(key: Buffer | null | undefined): boolean {
  return (
    key !== null && key !== undefined && key.length >= 4 && key.readInt16BE(2) === ControlRecordType.Abort
  );
}

function framing(message: string, position: number): BatchFaultError {
  return new BatchFaultError(batchFault('records-framing', message, position));
}

/** The records of one fetched partition, decoded as they are taken. */
export class FetchedRecords {
  /** The offset to fetch next: after the last complete batch, control batches included. */
  readonly nextOffset: number;
  readonly sizeInBytes: number;
  /**
   * The partition leader epoch of the last batch at or after the fetch offset (control and aborted batches
   * included), -1 for none or for legacy data: the epoch that goes with nextOffset, as Kafka's CompletedFetch
   * keeps lastEpoch from each batch it opens.
   */
  readonly nextOffsetEpoch: number = -1;
  /** Offset of the last record taken, -1 before any. */
  lastTakenOffset = -1;
  /** The partition leader epoch of the batch the last taken record came from, -1 before any. */
  lastTakenEpoch = -1;
  /** Positions of the v2 batches to deliver, in order. */
  private readonly batches: number[] = [];
  /** Legacy (magic 0/1) data is decoded at once, the old way; null for v2 data. */
  private readonly eager: BatchRecord[] | null = null;
  private eagerAt = 0;
  private batchIndex = 0;
  // The batch being taken from.
  private section: Buffer | null = null;
  private sectionAt = 0;
  private recordsLeft = 0;
  private batchPosition = 0;
  private baseOffset = 0;
  private batchEpoch = -1;
  private baseTimestamp = 0;
  private appendTime = -1;

  constructor(
    private readonly bytes: Buffer,
    private readonly fetchOffset: number,
    aborted: readonly AbortedTransaction[] | null,
    readCommitted: boolean,
    verifyCrc = true,
  ) {
    this.sizeInBytes = bytes.length;
    const pending = sortedAborted(aborted);
    const abortedProducers = new Set<number>();
    let nextOffset = fetchOffset;
    const cursor = new RecordsCursor(bytes, 0, bytes.length);
    while (cursor.next()) {
      const pos = cursor.position;
      if (cursor.magic < 2) {
        const eager = selectRecordsEager(bytes, fetchOffset, aborted, readCommitted, verifyCrc);
        this.eager = eager.records;
        this.nextOffset = eager.nextOffset;
        this.batches = [];
        return;
      }
      if (verifyCrc) {
        const fault = validateBatch(bytes, pos, pos + cursor.sizeInBytes);
        if (fault !== null) throw new BatchFaultError(fault);
      }
      const lastOffset = batchHeader.lastOffset(bytes, pos);
      if (lastOffset < fetchOffset) continue;
      nextOffset = Math.max(nextOffset, lastOffset + 1);
      this.nextOffsetEpoch = epochOrNone(batchHeader.partitionLeaderEpoch(bytes, pos));
      if (readCommitted) {
        while (pending.length > 0 && pending[0]!.firstOffset <= lastOffset) {
          abortedProducers.add(pending.shift()!.producerId);
        }
      }
      const attributes = batchHeader.attributes(bytes, pos);
      const producerId = batchHeader.producerId(bytes, pos);
      if ((attributes & Attribute.Control) !== 0) {
        if (readCommitted && isAbortMarker(readRecords(bytes, pos)[0]?.key))
          abortedProducers.delete(producerId);
        continue;
      }
      if (readCommitted && (attributes & Attribute.Transactional) !== 0 && abortedProducers.has(producerId)) {
        continue;
      }
      this.batches.push(pos);
    }
    if (cursor.fault !== null) throw new BatchFaultError(cursor.fault);
    this.nextOffset = nextOffset;
  }

  /** True when no record is left to take. */
  get done(): boolean {
    if (this.eager !== null) return this.eagerAt >= this.eager.length;
    return this.recordsLeft === 0 && this.batchIndex >= this.batches.length;
  }

  /** Appends up to `max` records to `out`, made by `make`; returns how many. */
  take<T>(max: number, out: T[], make: RecordFactory<T>): number {
    let taken = 0;
    if (this.eager !== null) {
      while (taken < max && this.eagerAt < this.eager.length) {
        const r = this.eager[this.eagerAt++]!;
        out.push(make(r.offset, r.timestamp, r.key, r.value, r.headers));
        this.lastTakenOffset = r.offset;
        taken++;
      }
      return taken;
    }
    while (taken < max) {
      if (this.recordsLeft === 0) {
        if (this.section !== null && this.sectionAt !== this.section.length) {
          throw new BatchFaultError(
            batchFault(
              'records-count',
              `${this.section.length - this.sectionAt} bytes left after the records`,
              this.batchPosition,
            ),
          );
        }
        if (this.batchIndex >= this.batches.length) break;
        this.openBatch(this.batches[this.batchIndex++]!);
        continue;
      }
      taken += this.takeOne(out, make);
    }
    return taken;
  }

  private openBatch(pos: number): void {
    const bytes = this.bytes;
    this.batchPosition = pos;
    this.section = batchRecordsSection(bytes, pos);
    this.sectionAt = 0;
    this.recordsLeft = batchHeader.recordsCount(bytes, pos);
    this.baseOffset = batchHeader.baseOffset(bytes, pos);
    this.batchEpoch = epochOrNone(batchHeader.partitionLeaderEpoch(bytes, pos));
    this.baseTimestamp = batchHeader.baseTimestamp(bytes, pos);
    this.appendTime =
      (batchHeader.attributes(bytes, pos) & Attribute.TimestampTypeLogAppend) !== 0
        ? batchHeader.maxTimestamp(bytes, pos)
        : -1;
  }

  /** Decodes the next record of the open batch; 1 if it was delivered, 0 if it lies before the fetch offset. */
  private takeOne<T>(out: T[], make: RecordFactory<T>): number {
    const buf = this.section!;
    const at = this.sectionAt;
    const end = buf.length;
    let length: number;
    let timestampDelta: number;
    let offsetDelta: number;
    let p: number;
    try {
      length = readVarint(buf, at, end);
      p = varintEnd;
      if (length < 6 || length > end - p)
        throw framing(`record length ${length} does not fit`, this.batchPosition);
      const bodyEnd = p + length;
      timestampDelta = readVarlong(buf, p + 1, bodyEnd);
      offsetDelta = readVarint(buf, varintEnd, bodyEnd);
      this.recordsLeft--;
      this.sectionAt = bodyEnd;
      const offset = this.baseOffset + offsetDelta;
      if (offset < this.fetchOffset) return 0;
      const keyLength = readVarint(buf, varintEnd, bodyEnd);
      p = varintEnd;
      let key: Buffer | null = null;
      if (keyLength >= 0) {
        if (keyLength > bodyEnd - p) throw framing('key runs past the record', this.batchPosition);
        key = buf.subarray(p, p + keyLength);
        p += keyLength;
      }
      const valueLength = readVarint(buf, p, bodyEnd);
      p = varintEnd;
      let value: Buffer | null = null;
      if (valueLength >= 0) {
        if (valueLength > bodyEnd - p) throw framing('value runs past the record', this.batchPosition);
        value = buf.subarray(p, p + valueLength);
        p += valueLength;
      }
      const headerCount = readVarint(buf, p, bodyEnd);
      p = varintEnd;
      let headers: RecordHeader[];
      if (headerCount === 0) {
        headers = [];
      } else {
        if (headerCount < 0 || headerCount > (bodyEnd - p) / 2) {
          throw framing(`header count ${headerCount}`, this.batchPosition);
        }
        headers = new Array(headerCount);
        for (let i = 0; i < headerCount; i++) {
          const keyBytes = readVarint(buf, p, bodyEnd);
          p = varintEnd;
          if (keyBytes < 0 || keyBytes > bodyEnd - p) throw framing('header key length', this.batchPosition);
          const headerKey = buf.toString('utf8', p, p + keyBytes);
          p += keyBytes;
          const valueBytes = readVarint(buf, p, bodyEnd);
          p = varintEnd;
          let headerValue: Buffer | null = null;
          if (valueBytes >= 0) {
            if (valueBytes > bodyEnd - p) throw framing('header value length', this.batchPosition);
            headerValue = buf.subarray(p, p + valueBytes);
            p += valueBytes;
          }
          headers[i] = { key: headerKey, value: headerValue };
        }
      }
      if (p !== bodyEnd)
        throw framing(
          `record declares ${length} bytes but uses ${p - (bodyEnd - length)}`,
          this.batchPosition,
        );
      const timestamp = this.appendTime >= 0 ? this.appendTime : this.baseTimestamp + timestampDelta;
      out.push(make(offset, timestamp, key, value, headers));
      this.lastTakenOffset = offset;
      this.lastTakenEpoch = this.batchEpoch;
      return 1;
    } catch (err) {
      if (err instanceof BatchFaultError) throw err;
      throw framing((err as Error).message, this.batchPosition);
    }
  }
}

export interface SelectedRecords {
  records: BatchRecord[];
  /** The offset to fetch next: after the last complete batch, control batches included. */
  nextOffset: number;
}

const asBatchRecord: RecordFactory<BatchRecord> = (offset, timestamp, key, value, headers) => ({
  attributes: 0,
  timestampDelta: 0,
  offsetDelta: 0,
  key,
  value,
  headers,
  offset,
  timestamp,
});

/** Every record a consumer would deliver from these bytes, decoded at once. */
export function selectRecords(
  bytes: Buffer,
  fetchOffset: number,
  aborted: readonly AbortedTransaction[] | null,
  readCommitted: boolean,
  verifyCrc = true,
): SelectedRecords {
  const fetched = new FetchedRecords(bytes, fetchOffset, aborted, readCommitted, verifyCrc);
  const records: BatchRecord[] = [];
  fetched.take(Number.MAX_SAFE_INTEGER, records, asBatchRecord);
  return { records, nextOffset: fetched.nextOffset };
}

/** The eager path, kept for legacy (magic 0 and 1) data, which carries no transactions. */
function selectRecordsEager(
  bytes: Buffer,
  fetchOffset: number,
  aborted: readonly AbortedTransaction[] | null,
  readCommitted: boolean,
  verifyCrc: boolean,
): SelectedRecords {
  const blob = decodeRecordsBlob(bytes, 0, bytes.length, { verifyCrc });
  const pending = sortedAborted(aborted);
  const abortedProducers = new Set<number>();
  const records: BatchRecord[] = [];
  let nextOffset = fetchOffset;
  for (const b of blob.batches) {
    if (b.lastOffset < fetchOffset) continue;
    nextOffset = Math.max(nextOffset, b.lastOffset + 1);
    if (readCommitted) {
      while (pending.length > 0 && pending[0]!.firstOffset <= b.lastOffset) {
        abortedProducers.add(pending.shift()!.producerId);
      }
    }
    if (b.isControl) {
      if (readCommitted && isAbortMarker(b.records[0]?.key)) abortedProducers.delete(b.producerId);
      continue;
    }
    if (readCommitted && b.isTransactional && abortedProducers.has(b.producerId)) continue;
    for (const r of b.records) if (r.offset >= fetchOffset) records.push(r);
  }
  return { records, nextOffset };
}
