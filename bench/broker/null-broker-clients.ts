// What the null broker answers in its clients mode, so that real clients (Brook's, kafkajs, @platformatic/kafka,
// kcat) can produce and consume against a broker that costs next to nothing: the client benchmarks' "null
// broker" (issue 21: a client's records per CPU-second with the broker not the bound). Beyond the L_null
// answers (ApiVersions, Metadata, Produce), it keeps each produced batch in memory (copied, with its base offset
// set), serves Fetch from them, and acts as a one-node group coordinator that accepts whatever it is told:
// FindCoordinator names itself, JoinGroup makes every joiner the leader of a group of its own generation,
// SyncGroup hands back what the leader assigned, commits are kept and fetched back. No validation, no CRC, no
// storage, no rebalancing between members: good for one consumer per group, which is what the benchmarks run.

import { randomBytes } from 'node:crypto';
import { partitionData } from '../../src/broker/handlers/01-fetch.js';
import type { RequestHeader } from '../../src/protocol/headers.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import type { ListOffsetsRequest } from '../../src/protocol/messages/02-list-offsets.js';
import type { OffsetCommitRequest } from '../../src/protocol/messages/08-offset-commit.js';
import type { OffsetFetchRequest } from '../../src/protocol/messages/09-offset-fetch.js';
import type { FindCoordinatorRequest } from '../../src/protocol/messages/10-find-coordinator.js';
import type { JoinGroupRequest } from '../../src/protocol/messages/11-join-group.js';
import type { LeaveGroupRequest } from '../../src/protocol/messages/13-leave-group.js';
import type { SyncGroupRequest } from '../../src/protocol/messages/14-sync-group.js';
import type { CreateTopicsRequest } from '../../src/protocol/messages/19-create-topics.js';
import { EMPTY_BYTES } from '../../src/protocol/messages/codec-support.js';
import type { Reader } from '../../src/protocol/primitives/index.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';

/** The APIs answered only in clients mode. */
export const clientApis: readonly number[] = [
  ApiKey.FETCH,
  ApiKey.LIST_OFFSETS,
  ApiKey.OFFSET_COMMIT,
  ApiKey.OFFSET_FETCH,
  ApiKey.FIND_COORDINATOR,
  ApiKey.JOIN_GROUP,
  ApiKey.HEARTBEAT,
  ApiKey.LEAVE_GROUP,
  ApiKey.SYNC_GROUP,
  ApiKey.CREATE_TOPICS,
  ApiKey.INIT_PRODUCER_ID,
];

const NONE = 0;
const UNKNOWN_TOPIC_ID = 100;
const LATEST_TIMESTAMP = -1n;
const NO_OFFSET = -1n;
/** Batch header: baseOffset int64 at 0, batchLength int32 at 8, lastOffsetDelta int32 at 23. */
const BATCH_OVERHEAD = 12;
const BATCH_HEADER_BYTES = 61;

interface StoredBatch {
  baseOffset: number;
  bytes: Buffer;
}

/** One partition's batches in offset order; `next` is the offset the next batch gets. */
interface PartitionLog {
  batches: StoredBatch[];
  next: number;
}

export class NullClientState {
  private readonly logs = new Map<string, PartitionLog[]>();
  private readonly topicIds = new Map<string, string>();
  private readonly topicsById = new Map<string, string>();
  private readonly committed = new Map<string, bigint>();
  private readonly groupGenerations = new Map<string, number>();
  private readonly assignments = new Map<string, Buffer>();
  private readonly appendWaiters = new Set<() => void>();
  private nextProducerId = 1000n;

  constructor(
    private readonly partitionCount: number,
    private readonly self: () => { host: string; port: number },
  ) {}

  /** A stable topic id per name (Fetch v13+ and Metadata v10+ name topics by id). */
  topicId(name: string): string {
    let id = this.topicIds.get(name);
    if (id === undefined) {
      id = randomBytes(16).toString('base64url');
      this.topicIds.set(name, id);
      this.topicsById.set(id, name);
    }
    return id;
  }

  /** Every topic produced to or created, for a Metadata request of all topics. */
  topicNames(): string[] {
    return [...this.topicIds.keys()];
  }

  /** Keeps a copy of a produced partition's batches with their offsets; answers the first batch's base offset. */
  append(topic: string, partition: number, records: Buffer | null): number {
    this.topicId(topic);
    const log = this.log(topic, partition);
    const base = log.next;
    if (records !== null) {
      for (let position = 0; position + BATCH_HEADER_BYTES <= records.length; ) {
        const size = BATCH_OVERHEAD + records.readInt32BE(position + 8);
        const bytes = Buffer.from(records.subarray(position, position + size));
        bytes.writeBigInt64BE(BigInt(log.next), 0);
        log.batches.push({ baseOffset: log.next, bytes });
        log.next += records.readInt32BE(position + 23) + 1;
        position += size;
      }
    }
    for (const wake of this.appendWaiters) wake();
    this.appendWaiters.clear();
    return base;
  }

  private log(topic: string, partition: number): PartitionLog {
    let logs = this.logs.get(topic);
    if (logs === undefined) {
      logs = [];
      this.logs.set(topic, logs);
    }
    let log = logs[partition];
    if (log === undefined) {
      log = { batches: [], next: 0 };
      logs[partition] = log;
    }
    return log;
  }

  /** Answers `header`'s request into a response body, or null for an API it does not serve. */
  async respond(header: RequestHeader, r: Reader): Promise<unknown | null> {
    const version = header.requestApiVersion;
    const api = getApi(header.requestApiKey);
    const request = api.decodeRequest(r, version);
    switch (header.requestApiKey) {
      case ApiKey.FETCH:
        return this.fetch(request as FetchRequest);
      case ApiKey.LIST_OFFSETS:
        return this.listOffsets(request as ListOffsetsRequest);
      case ApiKey.CREATE_TOPICS:
        return this.createTopics(request as CreateTopicsRequest);
      case ApiKey.INIT_PRODUCER_ID:
        return { throttleTimeMs: 0, errorCode: NONE, producerId: this.nextProducerId++, producerEpoch: 0 };
      case ApiKey.FIND_COORDINATOR:
        return this.findCoordinator(request as FindCoordinatorRequest);
      case ApiKey.JOIN_GROUP:
        return this.joinGroup(request as JoinGroupRequest);
      case ApiKey.SYNC_GROUP:
        return this.syncGroup(request as SyncGroupRequest);
      case ApiKey.HEARTBEAT:
        return { throttleTimeMs: 0, errorCode: NONE };
      case ApiKey.LEAVE_GROUP: {
        const leave = request as LeaveGroupRequest;
        return {
          throttleTimeMs: 0,
          errorCode: NONE,
          members: leave.members.map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            errorCode: NONE,
          })),
        };
      }
      case ApiKey.OFFSET_COMMIT:
        return this.offsetCommit(request as OffsetCommitRequest);
      case ApiKey.OFFSET_FETCH:
        return this.offsetFetch(request as OffsetFetchRequest);
      default:
        return null;
    }
  }

  private async fetch(request: FetchRequest): Promise<unknown> {
    let response = this.fetchNow(request);
    if (response.bytes === 0 && request.maxWaitMs > 0) {
      // Long poll as a broker does: answer at the next append or when maxWaitMs is up, whichever comes first.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.appendWaiters.delete(wake);
          resolve();
        }, request.maxWaitMs);
        const wake = (): void => {
          clearTimeout(timer);
          resolve();
        };
        this.appendWaiters.add(wake);
      });
      response = this.fetchNow(request);
    }
    return response.body;
  }

  private fetchNow(request: FetchRequest): { body: unknown; bytes: number } {
    let budget = request.maxBytes;
    let bytes = 0;
    const responses = request.topics.map((t) => {
      const name = t.topic !== '' ? t.topic : this.topicsById.get(t.topicId);
      return {
        topic: t.topic,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => {
          if (name === undefined)
            return partitionData(p.partition, UNKNOWN_TOPIC_ID, 0, 0, 0, null, EMPTY_BYTES);
          const log = this.log(name, p.partition);
          const records = readFrom(
            log,
            Number(p.fetchOffset),
            Math.min(budget, p.partitionMaxBytes),
            bytes === 0,
          );
          if (records !== null) {
            budget -= records.length;
            bytes += records.length;
          }
          return partitionData(p.partition, NONE, log.next, log.next, 0, null, records ?? EMPTY_BYTES);
        }),
      };
    });
    return {
      body: { throttleTimeMs: 0, errorCode: NONE, sessionId: 0, responses, nodeEndpoints: [] },
      bytes,
    };
  }

  private listOffsets(request: ListOffsetsRequest): unknown {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const offset =
            p.timestamp === LATEST_TIMESTAMP ? BigInt(this.log(t.name, p.partitionIndex).next) : 0n;
          return {
            partitionIndex: p.partitionIndex,
            errorCode: NONE,
            oldStyleOffsets: [offset],
            timestamp: -1n,
            offset,
            leaderEpoch: 0,
          };
        }),
      })),
    };
  }

  private createTopics(request: CreateTopicsRequest): unknown {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        topicId: this.topicId(t.name),
        errorCode: NONE,
        errorMessage: null,
        topicConfigErrorCode: NONE,
        numPartitions: this.partitionCount,
        replicationFactor: 1,
        configs: [],
      })),
    };
  }

  private findCoordinator(request: FindCoordinatorRequest): unknown {
    const { host, port } = this.self();
    const keys = request.coordinatorKeys.length > 0 ? request.coordinatorKeys : [request.key];
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      errorMessage: null,
      nodeId: 0,
      host,
      port,
      coordinators: keys.map((key) => ({ key, nodeId: 0, host, port, errorCode: NONE, errorMessage: null })),
    };
  }

  private joinGroup(request: JoinGroupRequest): unknown {
    const generationId = (this.groupGenerations.get(request.groupId) ?? 0) + 1;
    this.groupGenerations.set(request.groupId, generationId);
    const memberId =
      request.memberId !== '' ? request.memberId : `${request.groupId}-${randomBytes(6).toString('hex')}`;
    const protocol = request.protocols[0];
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      generationId,
      protocolType: request.protocolType,
      protocolName: protocol?.name ?? null,
      leader: memberId,
      skipAssignment: false,
      memberId,
      members: [
        {
          memberId,
          groupInstanceId: request.groupInstanceId,
          metadata: protocol?.metadata ?? Buffer.alloc(0),
        },
      ],
    };
  }

  private syncGroup(request: SyncGroupRequest): unknown {
    for (const a of request.assignments)
      this.assignments.set(`${request.groupId}\0${a.memberId}`, a.assignment);
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      protocolType: request.protocolType,
      protocolName: request.protocolName,
      assignment: this.assignments.get(`${request.groupId}\0${request.memberId}`) ?? Buffer.alloc(0),
    };
  }

  private offsetCommit(request: OffsetCommitRequest): unknown {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          this.committed.set(commitKey(request.groupId, t.name, p.partitionIndex), p.committedOffset);
          return { partitionIndex: p.partitionIndex, errorCode: NONE };
        }),
      })),
    };
  }

  private offsetFetch(request: OffsetFetchRequest): unknown {
    const partitionsOf = (groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null) =>
      (topics ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({
          partitionIndex,
          committedOffset: this.committed.get(commitKey(groupId, t.name, partitionIndex)) ?? NO_OFFSET,
          committedLeaderEpoch: -1,
          metadata: '',
          errorCode: NONE,
        })),
      }));
    return {
      throttleTimeMs: 0,
      topics: partitionsOf(request.groupId, request.topics),
      errorCode: NONE,
      groups: request.groups.map((g) => ({
        groupId: g.groupId,
        topics: partitionsOf(g.groupId, g.topics),
        errorCode: NONE,
      })),
    };
  }
}

function commitKey(group: string, topic: string, partition: number): string {
  return `${group}\0${topic}\0${partition}`;
}

/**
 * The batches from the one holding `offset` on, up to `maxBytes`; the first batch whole even when larger if
 * `firstInResponse` (as Kafka does, so a consumer always progresses).
 */
function readFrom(
  log: PartitionLog,
  offset: number,
  maxBytes: number,
  firstInResponse: boolean,
): Buffer | null {
  const { batches } = log;
  let low = 0;
  let high = batches.length;
  // The last batch whose base offset is at or below `offset`.
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (batches[mid]!.baseOffset <= offset) low = mid + 1;
    else high = mid;
  }
  const chosen: Buffer[] = [];
  let size = 0;
  for (let i = Math.max(low - 1, 0); i < batches.length; i++) {
    const bytes = batches[i]!.bytes;
    if (size + bytes.length > maxBytes && !(chosen.length === 0 && firstInResponse)) break;
    if (batches[i]!.baseOffset + bytes.readInt32BE(23) < offset) continue;
    chosen.push(bytes);
    size += bytes.length;
  }
  return chosen.length === 0 ? null : chosen.length === 1 ? chosen[0]! : Buffer.concat(chosen, size);
}
