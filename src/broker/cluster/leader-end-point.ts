// What a replica fetcher asks of the leader it follows (Kafka's LeaderEndPoint): fetches with this broker's replica
// id, the end offsets of leader epochs (OffsetForLeaderEpoch), and the leader's log end and log start offsets
// (ListOffsets LATEST and EARLIEST with the replica id). The fetcher knows only this interface, so that the same
// fetcher runs against a leader over the wire (RemoteLeaderEndPoint, here) and against a leader in the same
// process under a seeded scheduler (the data-plane simulation in test/sim).
//
// Every call resolves with the leader's answer or rejects when none came (a lost connection, a timeout); the
// fetcher then backs off and asks again. Ownership: the fetcher owns its end point and closes it when it stops.

import type { FramePool } from '../../common/frame-pool.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { FetchRequest, FetchResponse } from '../../protocol/messages/01-fetch.js';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/messages/02-list-offsets.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../protocol/messages/23-offset-for-leader-epoch.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { ApiKey } from '../../protocol/registry.js';
import type { InterBrokerSecurity } from '../../security/inter-broker.js';
import { ListOffsetsTimestamp } from '../../storage/log.js';
import { InterBrokerConnection } from './inter-broker-connection.js';

/** Fetch v12: KIP-320 (lastFetchedEpoch, divergingEpoch) with topic names. */
export const REPLICA_FETCH_VERSION_BY_NAME = 12;
/** Fetch v15: topic ids, and the follower's broker epoch in replicaState (KIP-903). */
export const REPLICA_FETCH_VERSION = 15;
/** OffsetForLeaderEpoch v4: the replica id and the current leader epoch. */
export const OFFSET_FOR_LEADER_EPOCH_VERSION = 4;
/** ListOffsets v4: the current leader epoch (fencing) and one offset per partition. */
const LIST_OFFSETS_VERSION = 4;

/** The leader's answer for one partition's offset query: an error code, else the offset. */
export interface LeaderOffset {
  readonly errorCode: number;
  readonly offset: number;
}

export interface LeaderEndPoint {
  /**
   * A replica fetch (its replicaId is this broker's); `timeoutMs` bounds the wait for the answer. The answer's
   * records may be views of memory the end point reuses: they are valid until the next fetch() on it, and the
   * fetcher appends them (synchronously) before it asks again.
   */
  fetch(request: FetchRequest, timeoutMs: number): Promise<FetchResponse>;
  /** The end offsets of the given leader epochs in the leader's log. */
  fetchEpochEndOffsets(
    request: OffsetForLeaderEpochRequest,
    timeoutMs: number,
  ): Promise<OffsetForLeaderEpochResponse>;
  /** The leader's log end offset (ListOffsets LATEST from a replica), fenced by `currentLeaderEpoch`. */
  fetchLatestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset>;
  /** The leader's log start offset (ListOffsets EARLIEST from a replica), fenced by `currentLeaderEpoch`. */
  fetchEarliestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset>;
  /** Ends the connection; calls in flight reject. */
  close(): void;
}

/**
 * A leader over the wire: one inter-broker connection, requests in the protocol's wire format. A fetch answer's
 * frame comes from `pool` and goes back to it when the next fetch starts (see LeaderEndPoint.fetch), so that the
 * follower reads every replicated byte into reused memory.
 */
export class RemoteLeaderEndPoint implements LeaderEndPoint {
  private readonly connection: InterBrokerConnection;
  /** The frame of the last fetch answer, until the next fetch. */
  private heldFrame: Buffer | null = null;

  constructor(
    host: string,
    port: number,
    private readonly brokerId: number,
    private readonly socketTimeoutMs: number,
    security?: InterBrokerSecurity,
    pool?: FramePool,
  ) {
    this.connection = new InterBrokerConnection(
      host,
      port,
      `broker-${brokerId}-fetcher`,
      security,
      pool ?? null,
    );
  }

  /**
   * By topic id (v15, with this broker's epoch) when every topic's id is known here, else by name (v12). The
   * answer carries names either way: a v15 answer's topic ids are mapped back to the names asked for.
   */
  async fetch(request: FetchRequest, timeoutMs: number): Promise<FetchResponse> {
    const byId = request.topics.every((t) => t.topicId !== '' && t.topicId !== ZERO_UUID);
    const version = byId ? REPLICA_FETCH_VERSION : REPLICA_FETCH_VERSION_BY_NAME;
    if (this.heldFrame !== null) {
      this.connection.releaseFrame(this.heldFrame);
      this.heldFrame = null;
    }
    const { response, frame } = await this.connection.requestHeld<FetchResponse>(
      ApiKey.FETCH,
      version,
      request,
      timeoutMs,
    );
    this.heldFrame = frame;
    if (!byId) return response;
    const names = new Map(request.topics.map((t) => [t.topicId, t.topic]));
    for (const t of response.responses) t.topic = names.get(t.topicId) ?? t.topic;
    return response;
  }

  fetchEpochEndOffsets(
    request: OffsetForLeaderEpochRequest,
    timeoutMs: number,
  ): Promise<OffsetForLeaderEpochResponse> {
    return this.connection.request<OffsetForLeaderEpochResponse>(
      ApiKey.OFFSET_FOR_LEADER_EPOCH,
      OFFSET_FOR_LEADER_EPOCH_VERSION,
      request,
      timeoutMs,
    );
  }

  fetchLatestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    return this.listOffset(topic, partition, currentLeaderEpoch, ListOffsetsTimestamp.Latest);
  }

  fetchEarliestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    return this.listOffset(topic, partition, currentLeaderEpoch, ListOffsetsTimestamp.Earliest);
  }

  /**
   * The last answer's frame is not given back: the fetcher may still be applying it (close() comes from another
   * task, e.g. a LeaderAndIsr), so it leaves the pool and the garbage collector frees it.
   */
  close(): void {
    this.heldFrame = null;
    this.connection.close();
  }

  private async listOffset(
    topic: string,
    partition: number,
    currentLeaderEpoch: number,
    timestamp: number,
  ): Promise<LeaderOffset> {
    const request: ListOffsetsRequest = {
      replicaId: this.brokerId,
      isolationLevel: 0,
      timeoutMs: 0,
      topics: [
        {
          name: topic,
          partitions: [
            { partitionIndex: partition, currentLeaderEpoch, timestamp: BigInt(timestamp), maxNumOffsets: 1 },
          ],
        },
      ],
    };
    const response = await this.connection.request<ListOffsetsResponse>(
      ApiKey.LIST_OFFSETS,
      LIST_OFFSETS_VERSION,
      request,
      this.socketTimeoutMs,
    );
    const answer = response.topics.find((t) => t.name === topic)?.partitions[0];
    if (answer === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, offset: -1 };
    return { errorCode: answer.errorCode, offset: Number(answer.offset) };
  }
}
