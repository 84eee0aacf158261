// Decoding a whole `records` blob into batches of records, whatever its magics: what a consumer does with the
// records of a fetched partition, and what tools and tests do to look at a log. v2 batches keep their batch
// fields (producer, transactional and control bits) so that a read_committed consumer can drop aborted data;
// each legacy entry (a message, or a wrapper and its inner messages) becomes one batch without producer.
// A partial entry at the end is reported, not decoded; anything malformed throws BatchFaultError. CRCs are
// checked (as Java's check.crcs=true does) unless the caller says the bytes were validated already.

import { BatchFaultError } from './batch-fault.js';
import { batchHeader, NO_PRODUCER_EPOCH, NO_PRODUCER_ID } from './batch-header.js';
import { type BatchRecord, iterateRecords, type ReadRecordsOptions } from './batch-records.js';
import { decodeMessageSet } from './legacy-message.js';
import { RecordsCursor } from './records-cursor.js';
import { validateBatch } from './validate-batch.js';

export interface DecodedBatch {
  /** Position of the batch or legacy entry in the blob. */
  position: number;
  magic: number;
  baseOffset: number;
  lastOffset: number;
  producerId: number;
  producerEpoch: number;
  isTransactional: boolean;
  isControl: boolean;
  records: BatchRecord[];
}

export interface DecodeBlobOptions extends ReadRecordsOptions {
  /** Check each v2 batch's framing and CRC32C first (default true); legacy CRC32s are always checked. */
  verifyCrc?: boolean;
}

export interface DecodedBlob {
  batches: DecodedBatch[];
  partialBytes: number;
}

function legacyBatch(buf: Buffer, position: number, size: number, options: ReadRecordsOptions): DecodedBatch {
  const { messages } = decodeMessageSet(buf, position, position + size, options);
  const records: BatchRecord[] = messages.map((m, i) => ({
    attributes: 0,
    timestampDelta: 0,
    offsetDelta: i,
    key: m.key,
    value: m.value,
    headers: [],
    offset: m.offset,
    timestamp: m.timestamp,
  }));
  return {
    position,
    magic: messages[0]?.magic ?? buf[position + 16]!,
    baseOffset: records[0]?.offset ?? -1,
    lastOffset: records[records.length - 1]?.offset ?? -1,
    producerId: NO_PRODUCER_ID,
    producerEpoch: NO_PRODUCER_EPOCH,
    isTransactional: false,
    isControl: false,
    records,
  };
}

/** Decodes every complete batch and legacy entry of buf[start, end). */
export function decodeRecordsBlob(
  buf: Buffer,
  start = 0,
  end = buf.length,
  options: DecodeBlobOptions = {},
): DecodedBlob {
  const cursor = new RecordsCursor(buf, start, end);
  const batches: DecodedBatch[] = [];
  while (cursor.next()) {
    const pos = cursor.position;
    if (cursor.magic < 2) {
      batches.push(legacyBatch(buf, pos, cursor.sizeInBytes, options));
      continue;
    }
    if (options.verifyCrc !== false) {
      const fault = validateBatch(buf, pos, pos + cursor.sizeInBytes);
      if (fault !== null) throw new BatchFaultError(fault);
    }
    batches.push({
      position: pos,
      magic: 2,
      baseOffset: batchHeader.baseOffset(buf, pos),
      lastOffset: batchHeader.lastOffset(buf, pos),
      producerId: batchHeader.producerId(buf, pos),
      producerEpoch: batchHeader.producerEpoch(buf, pos),
      isTransactional: batchHeader.isTransactional(buf, pos),
      isControl: batchHeader.isControl(buf, pos),
      records: Array.from(iterateRecords(buf, pos, options)),
    });
  }
  if (cursor.fault !== null) throw new BatchFaultError(cursor.fault);
  return { batches, partialBytes: cursor.partialBytes };
}
