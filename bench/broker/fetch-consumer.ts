// A consumer for the broker benchmarks: one connection, one Fetch in flight (as a Kafka consumer does), every
// partition of one topic from offset 0, Kafka's consumer defaults for sizes (fetch.max.bytes 50 MiB,
// max.partition.fetch.bytes 1 MiB, fetch.min.bytes 1) and a short max wait. Records are not decoded: batches
// are walked by their headers, which is enough to count bytes and records and to advance the offsets.
//
// Two uses: the tail reader runs beside a produce run (`onBatch` gives each batch's arrival for end-to-end
// latency), and the backlog reader reads a stored topic to its end as fast as it can (`readUntil`).
import { assert } from '../../src/common/assert.js';
import { errorName } from '../../src/protocol/errors.js';
import {
  decodeFetchResponse,
  encodeFetchRequest,
  type FetchRequest,
} from '../../src/protocol/messages/01-fetch.js';
import { Writer } from '../../src/protocol/primitives/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { benchVersions } from './broker-setup.js';
import { batchHeaderBytes } from './produce-requests.js';
import { WireConnection } from './wire-connection.js';

const fetchMaxBytes = 50 * 1024 * 1024;
const partitionFetchMaxBytes = 1024 * 1024;

/** The most one of this consumer's fetches can bring of `partitions` partitions (record bytes, not framing). */
export function fetchResponseBytesMax(partitions: number): number {
  return Math.min(fetchMaxBytes, partitions * partitionFetchMaxBytes);
}

export interface ConsumerOptions {
  host: string;
  port: number;
  topic: string;
  partitions: number;
  /** fetch.max.wait.ms: how long the broker may hold a fetch that found nothing. */
  maxWaitMs: number;
  onBatch?: (partition: number, records: number, arrivedMs: number) => void;
}

export class FetchConsumer {
  /** Next offset to fetch, per partition. */
  readonly offsets: number[];
  batchBytes = 0;
  records = 0;
  batches = 0;
  fetches = 0;
  errors: Record<string, number> = {};
  private running = false;
  private stopped: Promise<void> = Promise.resolve();
  /** Fails the fetch in flight if the connection fails (one listener for the connection's life). */
  private rejectPending: (error: Error) => void = () => {};

  private constructor(
    private readonly connection: WireConnection,
    private readonly options: ConsumerOptions,
  ) {
    this.offsets = new Array(options.partitions).fill(0);
    connection.onFailure((error) => this.rejectPending(error));
  }

  static async connect(options: ConsumerOptions): Promise<FetchConsumer> {
    // Nothing of a response is kept past its walk: frames may be the connection's reused buffers.
    const connection = await WireConnection.connect(options.host, options.port, { transientFrames: true });
    return new FetchConsumer(connection, options);
  }

  /** Fetches in a loop until stop(); failures end the loop and are thrown by stop(). */
  start(): void {
    assert(!this.running, 'consumer already running');
    this.running = true;
    this.stopped = (async () => {
      while (this.running) await this.fetchOnce();
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.stopped;
  }

  /** Fetches until every partition reaches `endOffsets`, or throws after `timeoutMs`. */
  async readUntil(endOffsets: readonly number[], timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.offsets.some((offset, p) => offset < endOffsets[p]!)) {
      if (performance.now() > deadline) {
        throw new Error(
          `consumer at ${this.offsets.join(',')} of ${endOffsets.join(',')} after ${timeoutMs} ms`,
        );
      }
      await this.fetchOnce();
    }
  }

  close(): void {
    this.running = false;
    this.connection.close();
  }

  private fetchOnce(): Promise<void> {
    const request: FetchRequest = {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: this.options.maxWaitMs,
      minBytes: 1,
      maxBytes: fetchMaxBytes,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic: this.options.topic,
          topicId: '',
          partitions: this.offsets.map((offset, partition) => ({
            partition,
            currentLeaderEpoch: -1,
            fetchOffset: BigInt(offset),
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: partitionFetchMaxBytes,
            replicaDirectoryId: '',
          })),
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    };
    const w = new Writer();
    encodeFetchRequest(w, benchVersions.fetch, request);
    return new Promise<void>((resolve, reject) => {
      this.rejectPending = reject;
      this.connection.send(ApiKey.FETCH, benchVersions.fetch, [w.toBuffer()], (reader) => {
        try {
          this.onResponse(decodeFetchResponse(reader, benchVersions.fetch));
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  private onResponse(response: ReturnType<typeof decodeFetchResponse>): void {
    const arrivedMs = performance.now();
    this.fetches++;
    if (response.errorCode !== 0) this.countError(response.errorCode);
    for (const topic of response.responses) {
      for (const partition of topic.partitions) {
        if (partition.errorCode !== 0) this.countError(partition.errorCode);
        if (partition.records !== null) this.walk(partition.partitionIndex, partition.records, arrivedMs);
      }
    }
  }

  /** Counts the whole batches of `records` and moves the partition's offset past the last one. */
  private walk(partition: number, records: Buffer, arrivedMs: number): void {
    let position = 0;
    while (position + batchHeaderBytes <= records.length) {
      const size = 12 + records.readInt32BE(position + 8);
      if (position + size > records.length) break;
      assert(records[position + 16] === 2, 'the benchmarks produce record batches v2 only');
      const baseOffset = Number(records.readBigInt64BE(position));
      const lastOffsetDelta = records.readInt32BE(position + 23);
      const count = records.readInt32BE(position + 57);
      const next = baseOffset + lastOffsetDelta + 1;
      if (next > this.offsets[partition]!) {
        this.offsets[partition] = next;
        this.batchBytes += size;
        this.records += count;
        this.batches++;
        this.options.onBatch?.(partition, count, arrivedMs);
      }
      position += size;
    }
  }

  private countError(code: number): void {
    const name = errorName(code);
    this.errors[name] = (this.errors[name] ?? 0) + 1;
  }
}
