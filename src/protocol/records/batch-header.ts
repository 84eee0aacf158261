// Field layout of a RecordBatch (magic 2) header, and accessors that read and patch it in place.
//
//   offset  size  field
//        0     8  baseOffset            (int64)
//        8     4  batchLength           (int32, bytes after this field)
//       12     4  partitionLeaderEpoch  (int32)
//       16     1  magic                 (int8, 2)
//       17     4  crc                   (uint32, CRC32C of bytes 21..end)
//       21     2  attributes            (int16)
//       23     4  lastOffsetDelta       (int32)
//       27     8  baseTimestamp         (int64)
//       35     8  maxTimestamp          (int64)
//       43     8  producerId            (int64)
//       51     2  producerEpoch         (int16)
//       53     4  baseSequence          (int32)
//       57     4  recordsCount          (int32)
//       61        records
//
// The first 17 bytes (offset, length, epoch or legacy crc, magic) have the same positions in the legacy
// message format (magic 0 and 1), which is how a reader tells the formats apart.
// Offsets and timestamps are returned as numbers (see src/common/ids.ts for why).

export const BASE_OFFSET = 0;
export const BATCH_LENGTH = 8;
export const PARTITION_LEADER_EPOCH = 12;
export const MAGIC = 16;
export const CRC = 17;
export const ATTRIBUTES = 21;
export const LAST_OFFSET_DELTA = 23;
export const BASE_TIMESTAMP = 27;
export const MAX_TIMESTAMP = 35;
export const PRODUCER_ID = 43;
export const PRODUCER_EPOCH = 51;
export const BASE_SEQUENCE = 53;
export const RECORDS_COUNT = 57;

/** Bytes before the records of a v2 batch. */
export const BATCH_HEADER_BYTES = 61;
/** baseOffset + batchLength: the part of every batch or legacy message that is not counted by its length. */
export const LOG_OVERHEAD = 12;
/** The CRC of a v2 batch covers everything from the attributes to the end. */
export const CRC_START = ATTRIBUTES;

export const CURRENT_MAGIC = 2;

/** Bits of the int16 batch attributes. Bits 7 to 15 are unused and ignored, as Kafka does. */
export const Attribute = {
  CompressionMask: 0x07,
  TimestampTypeLogAppend: 0x08,
  Transactional: 0x10,
  Control: 0x20,
  DeleteHorizon: 0x40,
} as const;
export type Attribute = (typeof Attribute)[keyof typeof Attribute];

// The codec ids are shared with the compression module, which owns them.
export { CompressionType } from '../compression/compression-type.js';

export const TimestampType = {
  CreateTime: 0,
  LogAppendTime: 1,
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

/** Kafka's "no producer" / "no sequence" / "no timestamp" sentinels as they appear in a batch header. */
export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;
export const NO_TIMESTAMP = -1;

function readInt64AsNumber(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
}

/** Writes a safe integer as int64 in two halves: no BigInt on the append path, where offsets are patched. */
function writeInt64FromNumber(buf: Buffer, pos: number, value: number): void {
  const high = Math.floor(value / 0x1_0000_0000);
  buf.writeInt32BE(high, pos);
  buf.writeUInt32BE(value - high * 0x1_0000_0000, pos + 4);
}

/** Accessors over a batch that starts at `pos` of `buf`. They do not check bounds: validate first. */
export const batchHeader = {
  baseOffset: (buf: Buffer, pos = 0): number => readInt64AsNumber(buf, pos + BASE_OFFSET),
  batchLength: (buf: Buffer, pos = 0): number => buf.readInt32BE(pos + BATCH_LENGTH),
  /** Total bytes the batch occupies, header included. */
  sizeInBytes: (buf: Buffer, pos = 0): number => LOG_OVERHEAD + buf.readInt32BE(pos + BATCH_LENGTH),
  partitionLeaderEpoch: (buf: Buffer, pos = 0): number => buf.readInt32BE(pos + PARTITION_LEADER_EPOCH),
  magic: (buf: Buffer, pos = 0): number => buf.readInt8(pos + MAGIC),
  crc: (buf: Buffer, pos = 0): number => buf.readUInt32BE(pos + CRC),
  attributes: (buf: Buffer, pos = 0): number => buf.readInt16BE(pos + ATTRIBUTES),
  compression: (buf: Buffer, pos = 0): number =>
    buf.readInt16BE(pos + ATTRIBUTES) & Attribute.CompressionMask,
  isTransactional: (buf: Buffer, pos = 0): boolean =>
    (buf.readInt16BE(pos + ATTRIBUTES) & Attribute.Transactional) !== 0,
  isControl: (buf: Buffer, pos = 0): boolean => (buf.readInt16BE(pos + ATTRIBUTES) & Attribute.Control) !== 0,
  timestampType: (buf: Buffer, pos = 0): TimestampType =>
    (buf.readInt16BE(pos + ATTRIBUTES) & Attribute.TimestampTypeLogAppend) !== 0
      ? TimestampType.LogAppendTime
      : TimestampType.CreateTime,
  hasDeleteHorizon: (buf: Buffer, pos = 0): boolean =>
    (buf.readInt16BE(pos + ATTRIBUTES) & Attribute.DeleteHorizon) !== 0,
  /** With the delete-horizon bit set, baseTimestamp holds the horizon (KIP-534); otherwise there is none. */
  deleteHorizonMs: (buf: Buffer, pos = 0): number =>
    (buf.readInt16BE(pos + ATTRIBUTES) & Attribute.DeleteHorizon) !== 0
      ? readInt64AsNumber(buf, pos + BASE_TIMESTAMP)
      : NO_TIMESTAMP,
  lastOffsetDelta: (buf: Buffer, pos = 0): number => buf.readInt32BE(pos + LAST_OFFSET_DELTA),
  lastOffset: (buf: Buffer, pos = 0): number =>
    readInt64AsNumber(buf, pos + BASE_OFFSET) + buf.readInt32BE(pos + LAST_OFFSET_DELTA),
  baseTimestamp: (buf: Buffer, pos = 0): number => readInt64AsNumber(buf, pos + BASE_TIMESTAMP),
  maxTimestamp: (buf: Buffer, pos = 0): number => readInt64AsNumber(buf, pos + MAX_TIMESTAMP),
  producerId: (buf: Buffer, pos = 0): number => readInt64AsNumber(buf, pos + PRODUCER_ID),
  producerEpoch: (buf: Buffer, pos = 0): number => buf.readInt16BE(pos + PRODUCER_EPOCH),
  baseSequence: (buf: Buffer, pos = 0): number => buf.readInt32BE(pos + BASE_SEQUENCE),
  recordsCount: (buf: Buffer, pos = 0): number => buf.readInt32BE(pos + RECORDS_COUNT),
  hasProducerId: (buf: Buffer, pos = 0): boolean => buf.readInt32BE(pos + PRODUCER_ID) >= 0,
  /** The sequence of the last record; sequences wrap from 2^31-1 to 0, as in Kafka. */
  lastSequence: (buf: Buffer, pos = 0): number => {
    const base = buf.readInt32BE(pos + BASE_SEQUENCE);
    if (base < 0) return NO_SEQUENCE;
    return (base + buf.readInt32BE(pos + LAST_OFFSET_DELTA)) % 0x8000_0000;
  },

  /** Assigning offsets does not change the CRC: baseOffset is outside the checksummed range. */
  setBaseOffset: (buf: Buffer, pos: number, offset: number): void =>
    writeInt64FromNumber(buf, pos + BASE_OFFSET, offset),
  /** partitionLeaderEpoch is outside the checksummed range too. */
  setPartitionLeaderEpoch: (buf: Buffer, pos: number, epoch: number): void => {
    buf.writeInt32BE(epoch, pos + PARTITION_LEADER_EPOCH);
  },
} as const;
