// The records the group coordinator writes to __consumer_offsets, in Kafka's layouts (src/protocol/internal):
// an int16 key version selects the record type (0 and 1: OffsetCommitKey, 2: GroupMetadataKey, 3 and up: the
// KIP-848 consumer group records, which this coordinator does not write and skips when loading), and the value
// carries its own int16 version. A null value is a tombstone: the offset or the group is gone.
//
// Versions written follow Kafka: OffsetCommitKey v1, OffsetCommitValue v1 when the commit carries an explicit
// expire timestamp and v3 otherwise, GroupMetadataKey v2 and GroupMetadataValue v3.

import {
  type GroupMetadataValue,
  groupMetadataKeySchema,
  groupMetadataValueSchema,
  type OffsetCommitValue,
  offsetCommitKeySchema,
  offsetCommitValueSchema,
} from '../../protocol/internal/index.js';
import { decodeVersioned, encodeVersioned } from '../../protocol/messages/codec-support.js';
import { Reader } from '../../protocol/primitives/index.js';

export type GroupRecord =
  | {
      readonly kind: 'offset';
      readonly group: string;
      readonly topic: string;
      readonly partition: number;
      readonly value: OffsetCommitValue | null;
    }
  | { readonly kind: 'group'; readonly group: string; readonly value: GroupMetadataValue | null }
  | { readonly kind: 'other' };

export interface EncodedRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

export function offsetRecord(
  group: string,
  topic: string,
  partition: number,
  value: OffsetCommitValue | null,
): EncodedRecord {
  const key = encodeVersioned(offsetCommitKeySchema, 1, { group, topic, partition });
  if (value === null) return { key, value: null };
  const version = value.expireTimestamp >= 0n ? 1 : 3;
  return { key, value: encodeVersioned(offsetCommitValueSchema, version, value) };
}

export function groupRecord(group: string, value: GroupMetadataValue | null): EncodedRecord {
  const key = encodeVersioned(groupMetadataKeySchema, 2, { group });
  return { key, value: value === null ? null : encodeVersioned(groupMetadataValueSchema, 3, value) };
}

/** Reads one record of the topic; throws DecodeError on malformed bytes (the loader logs and skips it). */
export function decodeGroupRecord(key: Buffer, value: Buffer | null): GroupRecord {
  const r = new Reader(key);
  const version = r.int16();
  if (version === 0 || version === 1) {
    const k = offsetCommitKeySchema.decode(r, version);
    const v =
      value === null ? null : decodeVersioned(offsetCommitValueSchema, value, 'read-known-fields').value;
    return { kind: 'offset', group: k.group, topic: k.topic, partition: k.partition, value: v };
  }
  if (version === 2) {
    const k = groupMetadataKeySchema.decode(r, version);
    const v =
      value === null ? null : decodeVersioned(groupMetadataValueSchema, value, 'read-known-fields').value;
    return { kind: 'group', group: k.group, value: v };
  }
  return { kind: 'other' };
}
