// The records the group coordinator writes to __consumer_offsets, in Kafka's layouts (src/protocol/internal):
// an int16 key version selects the record type (0 and 1: OffsetCommitKey, 2: GroupMetadataKey, 3 to 8: the
// KIP-848 consumer group records; others are skipped when loading), and the value carries its own int16 version. A null value is a tombstone: the offset or the group is gone.
//
// Versions written follow Kafka: OffsetCommitKey v1, OffsetCommitValue v1 when the commit carries an explicit
// expire timestamp and v3 otherwise, GroupMetadataKey v2 and GroupMetadataValue v3.

import {
  type ConsumerGroupCurrentMemberAssignmentValue,
  type ConsumerGroupMemberMetadataValue,
  type ConsumerGroupPartitionMetadataValue,
  type ConsumerGroupTargetAssignmentMemberValue,
  consumerGroupCurrentMemberAssignmentKeySchema,
  consumerGroupCurrentMemberAssignmentValueSchema,
  consumerGroupMemberMetadataKeySchema,
  consumerGroupMemberMetadataValueSchema,
  consumerGroupMetadataKeySchema,
  consumerGroupMetadataValueSchema,
  consumerGroupPartitionMetadataKeySchema,
  consumerGroupPartitionMetadataValueSchema,
  consumerGroupTargetAssignmentMemberKeySchema,
  consumerGroupTargetAssignmentMemberValueSchema,
  consumerGroupTargetAssignmentMetadataKeySchema,
  consumerGroupTargetAssignmentMetadataValueSchema,
  type GroupMetadataValue,
  groupMetadataKeySchema,
  groupMetadataValueSchema,
  type OffsetCommitValue,
  offsetCommitKeySchema,
  offsetCommitValueSchema,
} from '../../protocol/internal/index.js';
import { type DataSchema, decodeVersioned, encodeVersioned } from '../../protocol/messages/codec-support.js';
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
  | { readonly kind: 'cg-epoch'; readonly group: string; readonly value: { epoch: number } | null }
  | {
      readonly kind: 'cg-topics';
      readonly group: string;
      readonly value: ConsumerGroupPartitionMetadataValue | null;
    }
  | {
      readonly kind: 'cg-target-epoch';
      readonly group: string;
      readonly value: { assignmentEpoch: number } | null;
    }
  | {
      readonly kind: 'cg-member';
      readonly group: string;
      readonly memberId: string;
      readonly value: ConsumerGroupMemberMetadataValue | null;
    }
  | {
      readonly kind: 'cg-target';
      readonly group: string;
      readonly memberId: string;
      readonly value: ConsumerGroupTargetAssignmentMemberValue | null;
    }
  | {
      readonly kind: 'cg-current';
      readonly group: string;
      readonly memberId: string;
      readonly value: ConsumerGroupCurrentMemberAssignmentValue | null;
    }
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

function versioned<V>(
  keyVersion: number,
  keySchema: DataSchema<unknown>,
  key: unknown,
  valueSchema: DataSchema<V>,
  value: V | null,
): EncodedRecord {
  return {
    key: encodeVersioned(keySchema, keyVersion, key),
    value: value === null ? null : encodeVersioned(valueSchema, 0, value),
  };
}

// KIP-848 consumer group records (key versions 3 to 8), values at version 0.
export const cgRecord = {
  epoch: (groupId: string, value: { epoch: number } | null) =>
    versioned(
      3,
      consumerGroupMetadataKeySchema as DataSchema<unknown>,
      { groupId },
      consumerGroupMetadataValueSchema,
      value,
    ),
  topics: (groupId: string, value: ConsumerGroupPartitionMetadataValue | null) =>
    versioned(
      4,
      consumerGroupPartitionMetadataKeySchema as DataSchema<unknown>,
      { groupId },
      consumerGroupPartitionMetadataValueSchema,
      value,
    ),
  member: (groupId: string, memberId: string, value: ConsumerGroupMemberMetadataValue | null) =>
    versioned(
      5,
      consumerGroupMemberMetadataKeySchema as DataSchema<unknown>,
      { groupId, memberId },
      consumerGroupMemberMetadataValueSchema,
      value,
    ),
  targetEpoch: (groupId: string, value: { assignmentEpoch: number } | null) =>
    versioned(
      6,
      consumerGroupTargetAssignmentMetadataKeySchema as DataSchema<unknown>,
      { groupId },
      consumerGroupTargetAssignmentMetadataValueSchema,
      value,
    ),
  target: (groupId: string, memberId: string, value: ConsumerGroupTargetAssignmentMemberValue | null) =>
    versioned(
      7,
      consumerGroupTargetAssignmentMemberKeySchema as DataSchema<unknown>,
      { groupId, memberId },
      consumerGroupTargetAssignmentMemberValueSchema,
      value,
    ),
  current: (groupId: string, memberId: string, value: ConsumerGroupCurrentMemberAssignmentValue | null) =>
    versioned(
      8,
      consumerGroupCurrentMemberAssignmentKeySchema as DataSchema<unknown>,
      { groupId, memberId },
      consumerGroupCurrentMemberAssignmentValueSchema,
      value,
    ),
};

function decodedValue<V>(schema: DataSchema<V>, value: Buffer | null): V | null {
  return value === null ? null : decodeVersioned(schema, value, 'read-known-fields').value;
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
  switch (version) {
    case 3:
      return {
        kind: 'cg-epoch',
        group: consumerGroupMetadataKeySchema.decode(r, 3).groupId,
        value: decodedValue(consumerGroupMetadataValueSchema, value),
      };
    case 4:
      return {
        kind: 'cg-topics',
        group: consumerGroupPartitionMetadataKeySchema.decode(r, 4).groupId,
        value: decodedValue(consumerGroupPartitionMetadataValueSchema, value),
      };
    case 5: {
      const k = consumerGroupMemberMetadataKeySchema.decode(r, 5);
      return {
        kind: 'cg-member',
        group: k.groupId,
        memberId: k.memberId,
        value: decodedValue(consumerGroupMemberMetadataValueSchema, value),
      };
    }
    case 6:
      return {
        kind: 'cg-target-epoch',
        group: consumerGroupTargetAssignmentMetadataKeySchema.decode(r, 6).groupId,
        value: decodedValue(consumerGroupTargetAssignmentMetadataValueSchema, value),
      };
    case 7: {
      const k = consumerGroupTargetAssignmentMemberKeySchema.decode(r, 7);
      return {
        kind: 'cg-target',
        group: k.groupId,
        memberId: k.memberId,
        value: decodedValue(consumerGroupTargetAssignmentMemberValueSchema, value),
      };
    }
    case 8: {
      const k = consumerGroupCurrentMemberAssignmentKeySchema.decode(r, 8);
      return {
        kind: 'cg-current',
        group: k.groupId,
        memberId: k.memberId,
        value: decodedValue(consumerGroupCurrentMemberAssignmentValueSchema, value),
      };
    }
    default:
      return { kind: 'other' };
  }
}
