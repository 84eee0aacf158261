// What the group coordinator's calls take and answer, independent of wire versions: the handlers in
// src/broker/handlers translate each API version to these and back.

import type { Protocol } from './classic-group.js';
import type { AppendVerificationGuard } from './group-storage.js';

export interface JoinRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly Protocol[];
  /** JoinGroup v4+: a member without an id is given one with MEMBER_ID_REQUIRED and must join again. */
  readonly requireKnownMemberId: boolean;
  /** JoinGroup v9+: a static leader that rejoins a Stable group can be told to skip the assignment. */
  readonly supportsSkippingAssignment: boolean;
}

export interface SyncRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: readonly { readonly memberId: string; readonly assignment: Buffer }[];
}

export interface MemberIdentity {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface LeaveResult {
  readonly errorCode: number;
  readonly members: readonly { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export interface TopicPartitions<P> {
  readonly name: string;
  readonly partitions: readonly P[];
}

export interface CommitPartition {
  readonly partitionIndex: number;
  readonly committedOffset: number;
  readonly committedLeaderEpoch: number;
  /** OffsetCommit v1's per-partition commit time as sent, or -1 (the time of the commit). */
  readonly commitTimestampMs: number;
  readonly committedMetadata: string | null;
}

export interface CommitRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** OffsetCommit v2-v4 retention_time_ms, or -1 for the broker's rule. */
  readonly retentionTimeMs: number;
  readonly topics: readonly TopicPartitions<CommitPartition>[];
}

/** TxnOffsetCommit: offsets of the producer's ongoing transaction. */
export interface TxnCommitRequest {
  readonly groupId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly topics: readonly TopicPartitions<CommitPartition>[];
  /**
   * KIP-890 verification that the group's __consumer_offsets partition (the argument) is in the producer's ongoing
   * transaction, asked before the offsets are appended (absent: none). The broker gives it: the transaction
   * coordinator may be on another broker.
   */
  readonly verify?: (offsetsPartition: number) => TxnCommitVerification | Promise<TxnCommitVerification>;
}

/** A TxnOffsetCommit's verification: the error to answer, or the guard the append must still find (null: none). */
export interface TxnCommitVerification {
  readonly errorCode: number;
  readonly guard: AppendVerificationGuard | null;
}

export type PartitionErrors = { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];

export interface FetchedOffset {
  readonly partitionIndex: number;
  readonly committedOffset: number;
  readonly committedLeaderEpoch: number;
  readonly metadata: string;
  readonly errorCode: number;
}

export interface FetchOffsetsResult {
  readonly errorCode: number;
  readonly topics: TopicPartitions<FetchedOffset>[];
}

export interface DescribedGroup {
  readonly errorCode: number;
  readonly groupId: string;
  readonly groupState: string;
  readonly protocolType: string;
  readonly protocolData: string;
  readonly members: readonly {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    memberMetadata: Buffer;
    memberAssignment: Buffer;
  }[];
}

export interface ListedGroup {
  readonly groupId: string;
  readonly protocolType: string;
  readonly groupState: string;
  readonly groupType: string;
}

export interface ConsumerHeartbeatRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly serverAssignor: string | null;
  readonly topicPartitions: readonly { topicId: string; partitions: readonly number[] }[] | null;
  readonly clientId: string;
  readonly clientHost: string;
}

export interface ConsumerHeartbeatResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly memberId: string | null;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  readonly assignment: { topicId: string; partitions: number[] }[] | null;
}
