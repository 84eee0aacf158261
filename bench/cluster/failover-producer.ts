// The producer of the failover measurement: acks=all writes to partition 0 of one topic at a fixed rate, each
// request one batch of one record whose value starts with its sequence number, so that every acknowledged
// offset can be read back and checked afterwards. It behaves as a Kafka producer with retries does: a write
// that fails (connection lost, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, a timeout) is sent again, in order,
// once metadata names a leader; metadata is asked of the brokers in turn (the bootstrap list), first
// `retryBackoffMs` after a failure (retry.backoff.ms). Records keep their intended send time from the fixed
// schedule, so the latency of a write held up by the failover counts the whole wait.
//
// No idempotence: a write whose answer was lost may be appended twice. Duplicates are counted, not failures;
// a lost write is an acknowledged offset that does not hold the acknowledged record.
import { errorName } from '../../src/protocol/errors.js';
import { decodeProduceResponse, encodeProduceRequest } from '../../src/protocol/messages/00-produce.js';
import { Writer } from '../../src/protocol/primitives/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { benchVersions } from '../broker/broker-setup.js';
import { WireConnection } from '../broker/wire-connection.js';
import { Histogram } from '../harness/histogram.js';
import type { LocalCluster } from './local-cluster.js';

export interface FailoverProducerOptions {
  cluster: LocalCluster;
  topic: string;
  recordBytes: number;
  writesPerSecond: number;
  inFlightMax: number;
  retryBackoffMs: number;
  /** The Produce request's timeoutMs (how long the leader may wait for the ISR). */
  requestTimeoutMs: number;
}

export interface Ack {
  sequence: number;
  offset: number;
  brokerId: number;
  atMs: number;
}

interface Write {
  sequence: number;
  intendedMs: number;
}

interface Leader {
  id: number;
  connection: WireConnection;
  inFlight: Set<Write>;
}

/** Sequence number stored in the first bytes of a record's value. */
export function sequenceOf(value: Buffer): number {
  return value.readUInt32BE(0);
}

export class FailoverProducer {
  readonly acks: Ack[] = [];
  readonly latency = new Histogram('us');
  readonly errors: Record<string, number> = {};
  /** Writes not yet sent, or to be sent again, by sequence. */
  private queue: Write[] = [];
  private leader: Leader | null = null;
  /** Former leaders' connections with answers still due. */
  private readonly draining = new Set<Leader>();
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing = false;
  private scheduleTimer: NodeJS.Timeout | null = null;
  private nextSequence = 0;
  private nextIntendedMs = 0;
  private sending = false;
  private closed = false;
  private metadataCursor = 0;
  private readonly padding: Buffer;

  constructor(private readonly options: FailoverProducerOptions) {
    this.padding = Buffer.alloc(Math.max(0, options.recordBytes - 4), 0x2e);
  }

  get written(): number {
    return this.nextSequence;
  }

  get unacknowledged(): number {
    let inFlight = this.leader?.inFlight.size ?? 0;
    for (const old of this.draining) inFlight += old.inFlight.size;
    return this.queue.length + inFlight;
  }

  /** Starts the fixed schedule and finds the leader. */
  start(): void {
    this.sending = true;
    this.nextIntendedMs = performance.now();
    this.tick();
    this.refresh(0);
  }

  /** Ends the schedule; writes already due are still delivered. */
  stopSending(): void {
    this.sending = false;
    if (this.scheduleTimer !== null) clearTimeout(this.scheduleTimer);
    this.scheduleTimer = null;
  }

  /** Waits until every write made is acknowledged; throws after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.unacknowledged > 0) {
      if (performance.now() > deadline)
        throw new Error(
          `${this.unacknowledged} writes unacknowledged ${timeoutMs} ms after the schedule ended`,
        );
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  close(): void {
    this.closed = true;
    this.stopSending();
    if (this.refreshTimer !== null) clearTimeout(this.refreshTimer);
    this.leader?.connection.close();
    for (const old of this.draining) old.connection.close();
  }

  private tick(): void {
    if (!this.sending || this.closed) return;
    const now = performance.now();
    const intervalMs = 1000 / this.options.writesPerSecond;
    while (this.nextIntendedMs <= now) {
      this.queue.push({ sequence: this.nextSequence++, intendedMs: this.nextIntendedMs });
      this.nextIntendedMs += intervalMs;
    }
    this.pump();
    this.scheduleTimer = setTimeout(() => this.tick(), Math.max(0, this.nextIntendedMs - performance.now()));
  }

  private pump(): void {
    const leader = this.leader;
    if (leader === null || this.closed) return;
    while (this.queue.length > 0 && leader.inFlight.size < this.options.inFlightMax) {
      this.send(leader, this.queue.shift()!);
    }
  }

  private send(leader: Leader, write: Write): void {
    const value = Buffer.concat([Buffer.alloc(4), this.padding]);
    value.writeUInt32BE(write.sequence, 0);
    const w = new Writer();
    encodeProduceRequest(w, benchVersions.produce, {
      transactionalId: null,
      acks: -1,
      timeoutMs: this.options.requestTimeoutMs,
      topicData: [
        { name: this.options.topic, partitionData: [{ index: 0, records: buildBatch([{ value }]) }] },
      ],
    });
    leader.inFlight.add(write);
    try {
      leader.connection.send(ApiKey.PRODUCE, benchVersions.produce, [w.toBuffer()], (reader) => {
        const now = performance.now();
        leader.inFlight.delete(write);
        let errorCode = -1;
        let offset = -1;
        try {
          const answer = decodeProduceResponse(reader, benchVersions.produce).responses[0]
            ?.partitionResponses[0];
          if (answer !== undefined) {
            errorCode = answer.errorCode;
            offset = Number(answer.baseOffset);
          }
        } catch {
          errorCode = -1;
        }
        if (errorCode === 0) {
          this.acks.push({ sequence: write.sequence, offset, brokerId: leader.id, atMs: now });
          this.latency.record((now - write.intendedMs) * 1000);
        } else {
          this.count(errorCode === -1 ? 'BAD_RESPONSE' : errorName(errorCode));
          this.retry([write]);
          this.abandon(leader);
        }
        this.settle(leader);
        this.pump();
      });
    } catch {
      // The connection failed between the check and the send: its failure listener retries the rest.
      leader.inFlight.delete(write);
      this.retry([write]);
      this.abandon(leader);
    }
  }

  private count(name: string): void {
    this.errors[name] = (this.errors[name] ?? 0) + 1;
  }

  private retry(writes: Iterable<Write>): void {
    this.queue.push(...writes);
    this.queue.sort((a, b) => a.sequence - b.sequence);
  }

  /** Stops sending to `leader` (its answers still count) and looks for the leader again after the backoff. */
  private abandon(leader: Leader): void {
    if (this.leader !== leader) return;
    this.leader = null;
    this.draining.add(leader);
    this.settle(leader);
    this.refresh(this.options.retryBackoffMs);
  }

  /** Closes a former leader's connection once nothing is due from it. */
  private settle(leader: Leader): void {
    if (this.leader !== leader && leader.inFlight.size === 0) {
      this.draining.delete(leader);
      leader.connection.close();
    }
  }

  private refresh(delayMs: number): void {
    if (this.refreshing || this.refreshTimer !== null || this.closed) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.findLeader();
    }, delayMs);
  }

  /** Asks the brokers in turn for the partition's leader and connects to it; tries again after the backoff. */
  private async findLeader(): Promise<void> {
    this.refreshing = true;
    try {
      const brokers = this.options.cluster.brokers;
      for (let i = 0; i < brokers.length && !this.closed; i++) {
        const via = brokers[(this.metadataCursor + i) % brokers.length]!;
        let leader: { id: number; port: number } | undefined;
        try {
          const response = await this.options.cluster.metadata(via.id, [this.options.topic]);
          const partition = response.topics[0]?.partitions.find((p) => p.partitionIndex === 0);
          const node = response.brokers.find((b) => b.nodeId === partition?.leaderId);
          if (partition !== undefined && partition.errorCode === 0 && node !== undefined)
            leader = { id: node.nodeId, port: node.port };
        } catch {
          continue;
        }
        if (leader === undefined) continue;
        this.metadataCursor = (this.metadataCursor + i) % brokers.length;
        try {
          const connection = await WireConnection.connect('127.0.0.1', leader.port);
          if (this.closed) {
            connection.close();
            return;
          }
          const current: Leader = { id: leader.id, connection, inFlight: new Set() };
          connection.onFailure(() => {
            const lost = [...current.inFlight];
            current.inFlight.clear();
            if (lost.length > 0) this.count('CONNECTION_LOST');
            this.retry(lost);
            this.draining.delete(current);
            this.abandon(current);
            this.pump();
          });
          this.leader = current;
          this.pump();
          return;
        } catch {
          // Metadata named a broker that is gone (stale): ask again after the backoff.
          break;
        }
      }
    } finally {
      this.refreshing = false;
    }
    if (this.leader === null) this.refresh(this.options.retryBackoffMs);
  }
}
