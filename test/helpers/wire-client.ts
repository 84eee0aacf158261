// A typed Kafka client for broker tests: encodes requests with the generated codecs, sends them over a real
// socket (the network module's RawClient), and decodes the responses. One request at a time unless the test
// pipelines on purpose with send()/receive().

import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeResponseHeader, encodeRequestHeader } from '../../src/protocol/headers.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { type BatchRecord, readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey, getApi } from '../../src/protocol/registry.js';
import { RawClient } from './raw-client.js';

export class WireClient {
  private correlationId = 1;
  private readonly sent: { apiKey: number; apiVersion: number; correlationId: number }[] = [];

  private constructor(
    readonly raw: RawClient,
    private readonly clientId: string,
  ) {}

  /** `clientId` goes into every request header (client quotas tell clients apart by it). */
  static async connect(host: string, port: number, clientId = 'wire-test'): Promise<WireClient> {
    return new WireClient(await RawClient.connect(host, port), clientId);
  }

  /** Encodes one request frame (header and body, no size prefix). */
  static encode(
    apiKey: number,
    apiVersion: number,
    correlationId: number,
    body: unknown,
    clientId = 'wire-test',
  ): Buffer {
    const w = new Writer();
    encodeRequestHeader(w, {
      requestApiKey: apiKey,
      requestApiVersion: apiVersion,
      correlationId,
      clientId,
    });
    getApi(apiKey).encodeRequest(w, apiVersion, body);
    return w.toBuffer();
  }

  send(apiKey: number, apiVersion: number, body: unknown): number {
    const correlationId = this.correlationId++;
    this.raw.sendFrame(WireClient.encode(apiKey, apiVersion, correlationId, body, this.clientId));
    this.sent.push({ apiKey, apiVersion, correlationId });
    return correlationId;
  }

  // Tests read decoded responses field by field; typing every response here would repeat the codecs' types.
  // biome-ignore lint/suspicious/noExplicitAny: see above.
  async receive<T = any>(timeoutMs = 10_000): Promise<T> {
    const request = this.sent.shift();
    if (request === undefined) throw new Error('nothing was sent');
    const frame = await this.raw.nextFrame(timeoutMs);
    const r = new Reader(frame);
    const header = decodeResponseHeader(r, request.apiKey, request.apiVersion);
    if (header.correlationId !== request.correlationId) {
      throw new Error(`correlation id ${header.correlationId}, expected ${request.correlationId}`);
    }
    return getApi(request.apiKey).decodeResponse(r, request.apiVersion) as T;
  }

  // biome-ignore lint/suspicious/noExplicitAny: as receive().
  async call<T = any>(apiKey: number, apiVersion: number, body: unknown, timeoutMs = 10_000): Promise<T> {
    this.send(apiKey, apiVersion, body);
    return this.receive<T>(timeoutMs);
  }

  close(): void {
    this.raw.socket.destroy();
  }
}

export interface TopicSpec {
  /** -1 (the broker's default) unless told, and when `assignments` are given. */
  numPartitions?: number;
  replicationFactor?: number;
  /** Replicas of each partition, by partition index. */
  assignments?: Record<number, number[]>;
  configs?: Record<string, string>;
}

/** Creates `topic` (CreateTopics v5) and asserts that it was created. */
export async function createTopic(client: WireClient, topic: string, spec: TopicSpec = {}): Promise<void> {
  const response = await client.call(ApiKey.CREATE_TOPICS, 5, {
    topics: [
      {
        name: topic,
        numPartitions: spec.numPartitions ?? -1,
        replicationFactor: spec.replicationFactor ?? -1,
        assignments: Object.entries(spec.assignments ?? {}).map(([partition, brokerIds]) => ({
          partitionIndex: Number(partition),
          brokerIds,
        })),
        configs: Object.entries(spec.configs ?? {}).map(([name, value]) => ({ name, value })),
      },
    ],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const created = response.topics[0];
  assert.equal(created.errorCode, ErrorCode.NONE, `topic ${topic} not created: ${created.errorMessage}`);
}

/** Produces one batch to partition 0 of `topic` (Produce v9); answers the partition's response. */
export async function produceBatch(
  client: WireClient,
  topic: string,
  records: Buffer,
  acks = -1,
  partition = 0,
  // biome-ignore lint/suspicious/noExplicitAny: as receive().
): Promise<any> {
  const response = await client.call(ApiKey.PRODUCE, 9, {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  return response.responses[0].partitionResponses[0];
}

/** A fetch answered with an error code (NOT_LEADER_OR_FOLLOWER just after a leader change, for example). */
export class FetchError extends Error {
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly code: number,
  ) {
    super(`fetch of ${topic}-${partition} failed with error ${code}`);
  }
}

/** How far readPartition reads, and how long it may wait to get there. */
export interface ReadPartitionOptions {
  /**
   * The high watermark the caller knows the partition has reached (exclusive end offset): the read goes on until
   * it has read that far, even while the broker answers a lower high watermark. A leader that has just taken over
   * answers its own high watermark, which can be behind the records it holds (and the writes acknowledged) until
   * it has moved; a read in that moment would otherwise end empty.
   */
  readonly untilOffset?: number;
  /** How long the read waits for records below its end before it returns what it has (default 30 s). */
  readonly timeoutMs?: number;
}

const READ_RETRY_MS = 50;

/**
 * Every record of a partition from `fromOffset` to the high watermark, fetched with Brook's own codecs. The end is
 * the high watermark of the last answer, or `untilOffset` if that is further; an answer that brings nothing while
 * the end is not reached (an empty answer below the high watermark, or a high watermark still behind
 * `untilOffset`) is fetched again until `timeoutMs` has passed, then the records read so far are returned: the
 * caller's assertion on them says what is missing.
 */
export async function readPartition(
  client: WireClient,
  topic: string,
  partition: number,
  fromOffset = 0,
  options: ReadPartitionOptions = {},
): Promise<BatchRecord[]> {
  const records: BatchRecord[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let offset = fromOffset;
  for (;;) {
    const response = await client.call(ApiKey.FETCH, 12, fetchBody(topic, partition, offset));
    const data = response.responses[0].partitions[0];
    if (data.errorCode !== 0) throw new FetchError(topic, partition, data.errorCode);
    const bytes: Buffer = data.records;
    const before = offset;
    for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
      if (pos + 12 + bytes.readInt32BE(pos + 8) > bytes.length) break;
      for (const r of readRecords(bytes, pos)) {
        if (r.offset >= offset) records.push(r);
      }
      offset = Math.max(offset, batchHeader.lastOffset(bytes, pos) + 1);
    }
    if (offset >= Math.max(Number(data.highWatermark), options.untilOffset ?? 0)) return records;
    if (offset === before) {
      if (Date.now() >= deadline) return records;
      await new Promise((r) => setTimeout(r, READ_RETRY_MS));
    }
  }
}

export function fetchBody(topic: string, partition: number, offset: number, maxWaitMs = 0, minBytes = 1) {
  return consumerFetchBody([{ topic, partitions: [fetchPartition(partition, offset)] }], {
    maxWaitMs,
    minBytes,
  });
}

/**
 * One Fetch v12 of partition 0 of `topic` from `offset` with `partitionMaxBytes`: the values of the whole batches
 * answered, and the offset after the last of them (`offset` when none came whole).
 */
export async function fetchValuesAt(
  client: WireClient,
  topic: string,
  offset: number,
  partitionMaxBytes: number,
): Promise<{ values: string[]; next: number }> {
  const body = fetchBody(topic, 0, offset);
  body.topics[0]!.partitions[0]!.partitionMaxBytes = partitionMaxBytes;
  const response = await client.call(ApiKey.FETCH, 12, body);
  const data = response.responses[0].partitions[0];
  assert.equal(data.errorCode, ErrorCode.NONE);
  const bytes: Buffer = data.records;
  const values: string[] = [];
  let next = offset;
  for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
    for (const r of readRecords(bytes, pos)) values.push(r.value?.toString() ?? '');
    next = batchHeader.lastOffset(bytes, pos) + 1;
  }
  return { values, next };
}

const ZERO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** One partition of a consumer's Fetch, read from `offset`; `currentLeaderEpoch` -1 when the consumer knows none. */
export function fetchPartition(partition: number, offset: number | bigint, currentLeaderEpoch = -1) {
  return {
    partition,
    currentLeaderEpoch,
    fetchOffset: BigInt(offset),
    lastFetchedEpoch: -1,
    logStartOffset: -1n,
    partitionMaxBytes: 1 << 20,
    replicaDirectoryId: ZERO_ID,
  };
}

export interface ConsumerFetchOptions {
  maxWaitMs?: number;
  minBytes?: number;
  /** A fetch session (KIP-227): 0 and -1, the defaults, fetch without one. */
  sessionId?: number;
  sessionEpoch?: number;
}

/**
 * A consumer's Fetch request (replica id -1) of `topics`, each named (before v13) or by topic id (v13 and later;
 * the other field left empty or zero).
 */
export function consumerFetchBody(
  topics: readonly { topic?: string; topicId?: string; partitions: ReturnType<typeof fetchPartition>[] }[],
  options: ConsumerFetchOptions = {},
) {
  return {
    clusterId: null,
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: options.maxWaitMs ?? 0,
    minBytes: options.minBytes ?? 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: options.sessionId ?? 0,
    sessionEpoch: options.sessionEpoch ?? -1,
    topics: topics.map((t) => ({
      topic: t.topic ?? '',
      topicId: t.topicId ?? ZERO_ID,
      partitions: t.partitions,
    })),
    forgottenTopicsData: [],
    rackId: '',
  };
}
