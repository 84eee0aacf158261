// Failover time. One repetition: a fresh topic of one partition, replication factor 3, min.insync.replicas=2,
// led by a broker that is not the controller (killing the controller too is another, slower case); the
// failover producer writes acks=all at a fixed rate; after a steady second the leader gets SIGKILL (a crash)
// or SIGTERM (controlled shutdown). Measured from the moment the signal is sent:
//
// - metadata: until a surviving broker's metadata names another leader (both survivors polled every 25 ms);
// - first write: until the first write acknowledged by the new leader reaches the producer (which finds the
//   leader as a client does, see failover-producer.ts);
// - lost writes: after the producer drained and the stopped broker was restarted and back in the ISR, the
//   partition is read from its leader and every acknowledged offset must hold the acknowledged record.
//
// For SIGKILL the controller learns of the death only when the broker's ZooKeeper session expires, so the
// first two are bounded below by zookeeper.session.timeout.ms (plus up to one ZooKeeper tick).
import os from 'node:os';
import { assert } from '../../src/common/assert.js';
import type { FetchResponse } from '../../src/protocol/messages/01-fetch.js';
import { readRecords } from '../../src/protocol/records/index.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { benchVersions } from '../broker/broker-setup.js';
import { WireConnection } from '../broker/wire-connection.js';
import { Histogram } from '../harness/histogram.js';
import { FailoverProducer, sequenceOf } from './failover-producer.js';
import type { LocalCluster } from './local-cluster.js';
import { pollUntil } from './local-cluster.js';
import { createAssignedTopic, deleteTopic, partitionStates, waitForTopicState } from './topics.js';

export type StopMode = 'kill' | 'terminate';

export interface FailoverSettings {
  writesPerSecond: number;
  recordBytes: number;
  inFlightMax: number;
  retryBackoffMs: number;
  requestTimeoutMs: number;
  /** Steady writing before the signal, and after the first write on the new leader. */
  steadyMs: number;
  metadataPollMs: number;
}

export const defaultFailoverSettings: FailoverSettings = {
  writesPerSecond: 100,
  recordBytes: 1024,
  inFlightMax: 5,
  retryBackoffMs: 50,
  requestTimeoutMs: 30_000,
  steadyMs: 1000,
  metadataPollMs: 25,
};

export interface FailoverRepetition {
  mode: StopMode;
  sessionTimeoutMs: number;
  oldLeader: number;
  /** The broker that acknowledged the first write after the signal. */
  newLeader: number;
  /** The leader the survivor's metadata named first (the same, unless leadership moved again). */
  metadataLeader: number;
  controller: number;
  leaderEpochBefore: number;
  leaderEpochAfter: number;
  /** From the signal to a survivor's metadata naming the new leader. */
  metadataMs: number;
  /** From the signal to the first write acknowledged by the new leader. */
  firstWriteMs: number;
  /** From the last write acknowledged by the old leader to the first by the new one. */
  writeGapMs: number;
  /** From the signal to the process's exit (SIGTERM: the controlled shutdown's length). */
  exitMs: number;
  /** SIGTERM only: the broker had not exited 45 s after the signal and was killed. */
  killedAfterBound: boolean;
  /** From the restart of the stopped broker to its return to the ISR (catching up included). */
  rejoinMs: number;
  writes: number;
  acknowledged: number;
  lostWrites: number;
  duplicates: number;
  errors: Record<string, number>;
  /** Latency from the intended send time of writes acknowledged before the signal: steady state. */
  steadyLatencyMs: { p50: number; p99: number; max: number };
  /** Longest any write waited from its intended send time (the stall the failover caused). */
  maxLatencyMs: number;
  loadAverage1m: number;
}

export async function failoverOnce(
  cluster: LocalCluster,
  mode: StopMode,
  repetition: number,
  settings: FailoverSettings,
  latency: Histogram,
): Promise<FailoverRepetition> {
  const sessionTimeoutMs = cluster.options.sessionTimeoutMs;
  const controller = await cluster.controllerId();
  const candidates = cluster.live().filter((b) => b.id !== controller);
  assert(
    candidates.length > 0 && cluster.live().length === cluster.brokers.length,
    'the cluster is not whole',
  );
  const leaderId = candidates[repetition % candidates.length]!.id;
  const replicas = [leaderId, ...cluster.brokers.map((b) => b.id).filter((id) => id !== leaderId)];
  const topic = `failover-${mode}-${sessionTimeoutMs}-${repetition}`;
  await createAssignedTopic(cluster.broker(controller).port, topic, [replicas], {
    'min.insync.replicas': '2',
  });
  await waitForTopicState(cluster, topic, 1, replicas.length, 30_000, [leaderId]);
  const before = (await partitionStates(cluster, leaderId, topic))![0]!;

  const producer = new FailoverProducer({ cluster, topic, ...settings });
  const steady = new Histogram('us');
  let stopped: ReturnType<LocalCluster['signal']> | undefined;
  try {
    producer.start();
    await pollUntil('the first acknowledged write', 15_000, async () => producer.acks.length > 0, 10);
    await sleep(settings.steadyMs);
    steady.merge(producer.latency);
    const acksBefore = producer.acks.length;

    stopped = cluster.signal(leaderId, mode === 'kill' ? 'SIGKILL' : 'SIGTERM');
    const { sentMs } = stopped;
    const survivors = cluster.live().map((b) => b.id);
    const boundMs = sessionTimeoutMs + 30_000;
    let newLeader = -1;
    let metadataAtMs = 0;
    await pollUntil(
      'a survivor naming a new leader',
      boundMs,
      async () => {
        const views = await Promise.all(
          survivors.map((id) => partitionStates(cluster, id, topic).catch(() => undefined)),
        );
        const named = views.find(
          (v) => v !== undefined && v[0]!.leaderId >= 0 && v[0]!.leaderId !== leaderId,
        );
        if (named === undefined) return false;
        metadataAtMs = performance.now();
        newLeader = named[0]!.leaderId;
        return true;
      },
      settings.metadataPollMs,
    );
    const firstNew = (): number =>
      producer.acks.findIndex((a, i) => i >= acksBefore && a.brokerId !== leaderId);
    await pollUntil('a write acknowledged by the new leader', boundMs, async () => firstNew() >= 0, 5);
    const first = producer.acks[firstNew()]!;
    const lastOld = producer.acks.reduce(
      (last, a) => (a.brokerId === leaderId && a.atMs > last ? a.atMs : last),
      Number.NEGATIVE_INFINITY,
    );
    await sleep(settings.steadyMs);
    producer.stopSending();
    await producer.drain(30_000);
    producer.close();
    latency.merge(producer.latency);
    const { exitedMs, killedAfterBound } = await stopped.exited;

    const restartedMs = performance.now();
    await cluster.restart(leaderId);
    await waitForTopicState(cluster, topic, 1, replicas.length, 60_000);
    const rejoinMs = performance.now() - restartedMs;
    const after = (await partitionStates(cluster, controller, topic))![0]!;
    const check = await checkAcknowledged(cluster.broker(after.leaderId).port, topic, producer);
    await deleteTopic(cluster.broker(controller).port, topic);

    const steadySummary = steady.summary();
    return {
      mode,
      sessionTimeoutMs,
      oldLeader: leaderId,
      newLeader: first.brokerId,
      controller,
      leaderEpochBefore: before.leaderEpoch,
      leaderEpochAfter: after.leaderEpoch,
      metadataMs: metadataAtMs - sentMs,
      firstWriteMs: first.atMs - sentMs,
      writeGapMs: first.atMs - lastOld,
      exitMs: exitedMs - sentMs,
      killedAfterBound,
      rejoinMs,
      writes: producer.written,
      acknowledged: producer.acks.length,
      lostWrites: check.lost,
      duplicates: check.duplicates,
      errors: producer.errors,
      steadyLatencyMs: {
        p50: steadySummary.p50 / 1000,
        p99: steadySummary.p99 / 1000,
        max: steadySummary.max / 1000,
      },
      maxLatencyMs: producer.latency.max / 1000,
      loadAverage1m: os.loadavg()[0]!,
      metadataLeader: newLeader,
    };
  } finally {
    producer.close();
    // A failed repetition leaves the broker down: bring it back so that the cluster stays whole.
    if (stopped !== undefined && cluster.broker(leaderId).process === null) {
      await stopped.exited.catch(() => undefined);
      await cluster.restart(leaderId).catch(() => {});
    }
  }
}

/**
 * Reads partition 0 of `topic` from offset 0 to the high watermark and checks every acknowledged write:
 * `lost` counts acknowledged offsets that hold another record or none; `duplicates` records appended twice.
 */
async function checkAcknowledged(
  port: number,
  topic: string,
  producer: FailoverProducer,
): Promise<{ lost: number; duplicates: number }> {
  const stored = await readPartition(port, topic);
  let lost = 0;
  for (const ack of producer.acks) if (stored.get(ack.offset) !== ack.sequence) lost++;
  const seen = new Set<number>();
  let duplicates = 0;
  for (const sequence of stored.values()) {
    if (seen.has(sequence)) duplicates++;
    seen.add(sequence);
  }
  return { lost, duplicates };
}

/** Sequence number by offset, for every record of partition 0 below the high watermark. */
async function readPartition(port: number, topic: string): Promise<Map<number, number>> {
  const connection = await WireConnection.connect('127.0.0.1', port);
  const out = new Map<number, number>();
  try {
    let offset = 0;
    for (;;) {
      const response = await connection.call<FetchResponse>(ApiKey.FETCH, benchVersions.fetch, {
        clusterId: null,
        replicaId: -1,
        replicaState: { replicaId: -1, replicaEpoch: -1n },
        maxWaitMs: 0,
        minBytes: 1,
        maxBytes: 8 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic,
            topicId: '',
            partitions: [
              {
                partition: 0,
                currentLeaderEpoch: -1,
                fetchOffset: BigInt(offset),
                lastFetchedEpoch: -1,
                logStartOffset: -1n,
                partitionMaxBytes: 4 << 20,
                replicaDirectoryId: '',
              },
            ],
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      });
      const data = response.responses[0]?.partitions[0];
      assert(
        data !== undefined && data.errorCode === 0,
        `read-back fetch of ${topic} failed (${data?.errorCode})`,
      );
      const highWatermark = Number(data.highWatermark);
      const bytes = data.records ?? Buffer.alloc(0);
      let next = offset;
      for (let pos = 0; pos + 12 <= bytes.length; ) {
        const size = 12 + bytes.readInt32BE(pos + 8);
        if (pos + size > bytes.length) break;
        for (const record of readRecords(bytes, pos)) {
          if (record.offset >= offset && record.value !== null && record.value !== undefined)
            out.set(record.offset, sequenceOf(Buffer.from(record.value)));
          next = Math.max(next, record.offset + 1);
        }
        pos += size;
      }
      if (next >= highWatermark) return out;
      assert(next > offset, `read-back of ${topic} stuck at offset ${offset} below ${highWatermark}`);
      offset = next;
    }
  } finally {
    connection.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
