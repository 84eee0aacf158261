// Which records of a fetched partition a consumer delivers: those at or after the fetch offset (a compressed
// batch may start earlier), never control records, and under read_committed none of an aborted transaction.
// A pure function of the fetched bytes, so the isolation rules are tested without a transactional broker.
//
// read_committed follows Kafka's fetcher: the response lists aborted transactions (producer id, first offset);
// a producer becomes "aborted" once the batches reach its first offset, its transactional batches are dropped
// until its ABORT marker, and the marker ends it.

import type { BatchRecord } from '../protocol/records/batch-records.js';
import { ControlRecordType } from '../protocol/records/control-record.js';
import { decodeRecordsBlob } from '../protocol/records/decode-records-blob.js';

export interface AbortedTransaction {
  producerId: bigint | number;
  firstOffset: bigint | number;
}

export interface SelectedRecords {
  records: BatchRecord[];
  /** The offset to fetch next: after the last complete batch, control batches included. */
  nextOffset: number;
}

export function selectRecords(
  bytes: Buffer,
  fetchOffset: number,
  aborted: readonly AbortedTransaction[] | null,
  readCommitted: boolean,
  verifyCrc = true,
): SelectedRecords {
  const blob = decodeRecordsBlob(bytes, 0, bytes.length, { verifyCrc });
  const pending = (aborted ?? [])
    .map((a) => ({ producerId: Number(a.producerId), firstOffset: Number(a.firstOffset) }))
    .sort((a, b) => a.firstOffset - b.firstOffset);
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
      const key = b.records[0]?.key;
      if (readCommitted && key && key.length >= 4 && key.readInt16BE(2) === ControlRecordType.Abort) {
        abortedProducers.delete(b.producerId);
      }
      continue;
    }
    if (readCommitted && b.isTransactional && abortedProducers.has(b.producerId)) continue;
    for (const r of b.records) if (r.offset >= fetchOffset) records.push(r);
  }
  return { records, nextOffset };
}
