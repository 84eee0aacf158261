// The leader's side of replica fetching, answered in process from a broker's real partitions: what Brook's Fetch,
// OffsetForLeaderEpoch and ListOffsets handlers answer a follower, with the same leader lookup (fencing by leader
// epoch) and the same KIP-320 rules (src/broker/replica/replica-fetch-rules.ts), without the wire and without long
// polls (a fetch with nothing to read is answered at once). The data-plane simulation sends these answers through
// its simulated network; DirectLeaderEndPoint answers at the next turn of the event loop (focused tests).

import type { LeaderEndPoint, LeaderOffset } from '../../src/broker/cluster/leader-end-point.js';
import type { MetadataCache } from '../../src/broker/metadata/metadata-cache.js';
import type { Purgatory } from '../../src/broker/purgatory.js';
import { leaderPartition } from '../../src/broker/replica/leader-lookup.js';
import {
  checkLastFetchedEpoch,
  fetchOffsetIsProgress,
} from '../../src/broker/replica/replica-fetch-rules.js';
import type { ReplicaManager } from '../../src/broker/replica/replica-manager.js';
import { type BrokerId, type LeaderEpoch, toOffset } from '../../src/common/ids.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  FetchRequest,
  FetchResponse,
  FetchResponsePartitionData,
} from '../../src/protocol/messages/01-fetch.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../src/protocol/messages/23-offset-for-leader-epoch.js';
import { LOG_OVERHEAD } from '../../src/protocol/records/batch-header.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { StorageErrorCode } from '../../src/storage/error-codes.js';
import type { Log } from '../../src/storage/log.js';

/** What a leader answers from: its partitions and its produce purgatory (a fetch that moves the HW checks it). */
export interface LeaderSide {
  readonly replicas: ReplicaManager;
  readonly purgatory: Purgatory;
}

/** The metadata a leader lookup needs: every partition asked for is known. */
const KNOWN_TOPIC = { partition: () => ({}) } as unknown as MetadataCache;

export async function answerFetch(leader: LeaderSide, request: FetchRequest): Promise<FetchResponse> {
  const responses: FetchResponse['responses'] = [];
  for (const t of request.topics) {
    const partitions: FetchResponsePartitionData[] = [];
    for (const p of t.partitions) {
      partitions.push(
        await answerPartitionFetch(
          leader,
          request.replicaId as BrokerId,
          Number(request.replicaState.replicaEpoch),
          t.topic,
          p,
        ),
      );
    }
    responses.push({ topic: t.topic, topicId: t.topicId, partitions });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses, nodeEndpoints: [] };
}

async function answerPartitionFetch(
  leader: LeaderSide,
  replicaId: BrokerId,
  replicaEpoch: number,
  topic: string,
  p: FetchRequest['topics'][number]['partitions'][number],
): Promise<FetchResponsePartitionData> {
  const part = leaderPartition(
    { replicas: leader.replicas, metadata: KNOWN_TOPIC },
    topic,
    p.partition,
    p.currentLeaderEpoch,
  );
  if (typeof part === 'number') return partitionData(p.partition, part, null);
  const log = part.log;
  const fetchOffset = Number(p.fetchOffset);
  const check = checkLastFetchedEpoch(log, fetchOffset, p.lastFetchedEpoch);
  if (check.kind === 'out-of-range') return partitionData(p.partition, ErrorCode.OFFSET_OUT_OF_RANGE, log);
  if (check.kind === 'diverging') {
    const data = partitionData(p.partition, ErrorCode.NONE, log);
    data.divergingEpoch = { epoch: check.epoch, endOffset: BigInt(check.endOffset) };
    return data;
  }
  if (fetchOffsetIsProgress(log, fetchOffset)) {
    const moved = part.recordFollowerEnd(replicaId, fetchOffset, undefined, replicaEpoch);
    part.recordFollowerStart(replicaId, Number(p.logStartOffset));
    if (moved) leader.purgatory.checkAndComplete(part.key);
  }
  const result = await log.startRead(toOffset(fetchOffset), p.partitionMaxBytes, log.writtenEndOffset, true)
    .result;
  if (result.errorCode !== StorageErrorCode.None) {
    return partitionData(p.partition, ErrorCode.OFFSET_OUT_OF_RANGE, log);
  }
  // A copy, as the wire would make: the follower must not share the leader's memory.
  return partitionData(p.partition, ErrorCode.NONE, log, Buffer.from(result.records));
}

export function answerEpochEndOffsets(
  leader: LeaderSide,
  request: OffsetForLeaderEpochRequest,
): OffsetForLeaderEpochResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => {
        const part = leaderPartition(
          { replicas: leader.replicas, metadata: KNOWN_TOPIC },
          t.topic,
          p.partition,
          p.currentLeaderEpoch,
        );
        if (typeof part === 'number')
          return { errorCode: part, partition: p.partition, leaderEpoch: -1, endOffset: -1n };
        const end = part.log.epochCache.endOffsetFor(p.leaderEpoch as LeaderEpoch, part.log.logEndOffset);
        return {
          errorCode: ErrorCode.NONE,
          partition: p.partition,
          leaderEpoch: end.epoch,
          endOffset: BigInt(end.endOffset),
        };
      }),
    })),
  };
}

/** ListOffsets from a replica: LATEST is the log end offset, EARLIEST the log start offset. */
export function answerOffset(
  leader: LeaderSide,
  topic: string,
  index: number,
  currentLeaderEpoch: number,
  latest: boolean,
): LeaderOffset {
  const part = leaderPartition(
    { replicas: leader.replicas, metadata: KNOWN_TOPIC },
    topic,
    index,
    currentLeaderEpoch,
  );
  if (typeof part === 'number') return { errorCode: part, offset: -1 };
  return { errorCode: ErrorCode.NONE, offset: latest ? part.log.logEndOffset : part.log.logStartOffset };
}

/** A leader end point answering from `leader` at the next turn of the event loop, counting each call. */
export class DirectLeaderEndPoint implements LeaderEndPoint {
  readonly calls = { fetch: 0, epochEndOffsets: 0, latest: 0, earliest: 0 };

  constructor(private readonly leader: LeaderSide) {}

  private async later<T>(answer: () => T | Promise<T>): Promise<T> {
    await new Promise((resolve) => setImmediate(resolve));
    return answer();
  }

  fetch(request: FetchRequest): Promise<FetchResponse> {
    this.calls.fetch++;
    return this.later(() => answerFetch(this.leader, request));
  }

  fetchEpochEndOffsets(request: OffsetForLeaderEpochRequest): Promise<OffsetForLeaderEpochResponse> {
    this.calls.epochEndOffsets++;
    return this.later(() => answerEpochEndOffsets(this.leader, request));
  }

  fetchLatestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    this.calls.latest++;
    return this.later(() => answerOffset(this.leader, topic, partition, currentLeaderEpoch, true));
  }

  fetchEarliestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    this.calls.earliest++;
    return this.later(() => answerOffset(this.leader, topic, partition, currentLeaderEpoch, false));
  }

  close(): void {}
}

function partitionData(
  partitionIndex: number,
  errorCode: number,
  log: Log | null,
  records: Buffer = Buffer.alloc(0),
): FetchResponsePartitionData {
  return {
    partitionIndex,
    errorCode,
    highWatermark: BigInt(log?.highWatermark ?? -1),
    lastStableOffset: BigInt(log?.lastStableOffset ?? -1),
    logStartOffset: BigInt(log?.logStartOffset ?? -1),
    divergingEpoch: { epoch: -1, endOffset: -1n },
    currentLeader: { leaderId: -1, leaderEpoch: -1 },
    snapshotId: { endOffset: -1n, epoch: -1 },
    abortedTransactions: null,
    preferredReadReplica: -1,
    records,
  };
}

/** Every record of a log up to its written end: offset -> value. */
export async function readLog(log: Log): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  let offset: number = log.logStartOffset;
  const end = log.writtenEndOffset;
  while (offset < end) {
    const result = await log.startRead(toOffset(offset), 1 << 20, end, true).result;
    if (result.errorCode !== StorageErrorCode.None || result.records.length === 0) break;
    const buf = result.records;
    for (let pos = 0; pos + LOG_OVERHEAD <= buf.length; ) {
      const size = LOG_OVERHEAD + buf.readInt32BE(pos + 8);
      if (pos + size > buf.length) break;
      for (const r of readRecords(buf, pos)) out.set(r.offset, r.value?.toString() ?? '');
      pos += size;
    }
    if (result.nextOffset <= offset) break;
    offset = result.nextOffset;
  }
  return out;
}
