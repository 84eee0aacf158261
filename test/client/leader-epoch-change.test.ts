// Position validation after a leader epoch change (KIP-320), as Kafka's consumer does it: when the metadata names a
// newer leader epoch for a partition than the one its position was checked against
// (SubscriptionState.maybeValidatePositionForCurrentLeader), the consumer stops fetching it and asks the leader with
// OffsetsForLeaderEpoch where the position's epoch ends, with the new epoch as the current one. A log that ends that
// epoch below the position was truncated (a new leader that had not replicated the last records): the consumer
// moves back to the end offset the leader gives and reads on from there, or, with auto.offset.reset=none, poll()
// throws LogTruncationError. A scripted broker: an in-process broker whose Metadata answers show the epoch raised,
// whose OffsetsForLeaderEpoch answers can end the epoch early, and which takes requests carrying the raised epoch as
// if they carried its own.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Consumer, type ConsumerOptions, type ConsumerRecord } from '../../src/client/consumer.js';
import { LogTruncationError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../src/protocol/messages/23-offset-for-leader-epoch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type EpochTopic, startEpochTopic } from '../helpers/epoch-topic.js';
import type { InProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'leader-epoch-change';
const tp = { topic: TOPIC, partition: 0 };
const RECORDS = 5;

/** Sets every `currentLeaderEpoch` above `real` in a request body back to `real` (the broker's own epoch). */
function lowerCurrentEpochs(value: unknown, real: number): void {
  if (Array.isArray(value)) {
    for (const v of value) lowerCurrentEpochs(v, real);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  if (typeof o.currentLeaderEpoch === 'number' && o.currentLeaderEpoch > real) o.currentLeaderEpoch = real;
  for (const v of Object.values(o)) if (typeof v === 'object') lowerCurrentEpochs(v, real);
}

describe('position validation after a leader epoch change', () => {
  let setup: EpochTopic;
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let leaderEpoch: number;
  /** The epoch the Metadata answers show for the partition (the broker's own until raised). */
  let shownEpoch: number;
  /** When set, OffsetsForLeaderEpoch answers end the asked epoch at this offset. */
  let truncatedAt: number | null;
  /**
   * When set, OffsetsForLeaderEpoch asked with a current leader epoch at or below this one is answered as a deposed
   * leader that never saw the newer epochs answers: the asked epoch is unknown (leader epoch and end offset -1).
   */
  let deposedAt: number | null;
  /** The OffsetsForLeaderEpoch partitions as the consumer sent them. */
  const asked: { leaderEpoch: number; currentLeaderEpoch: number }[] = [];

  before(async () => {
    setup = await startEpochTopic(TOPIC, RECORDS);
    ({ broker, bootstrapServers, leaderEpoch } = setup);
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) {
        return request.handle().then((r) => {
          const res = r as MetadataResponse;
          for (const t of res.topics)
            if (t.name === TOPIC) for (const p of t.partitions) p.leaderEpoch = shownEpoch;
          return res;
        });
      }
      if (request.apiKey === ApiKey.OFFSET_FOR_LEADER_EPOCH) {
        for (const t of (request.body as OffsetForLeaderEpochRequest).topics)
          for (const p of t.partitions)
            if (t.topic === TOPIC)
              asked.push({ leaderEpoch: p.leaderEpoch, currentLeaderEpoch: p.currentLeaderEpoch });
        const deposed = (request.body as OffsetForLeaderEpochRequest).topics.some((t) =>
          t.partitions.some((p) => deposedAt !== null && p.currentLeaderEpoch <= deposedAt),
        );
        lowerCurrentEpochs(request.body, leaderEpoch);
        const end = truncatedAt;
        return request.handle().then((r) => {
          const res = r as OffsetForLeaderEpochResponse;
          for (const t of res.topics)
            for (const p of t.partitions) {
              if (end !== null) p.endOffset = BigInt(end);
              if (deposed) {
                p.leaderEpoch = -1;
                p.endOffset = -1n;
              }
            }
          return res;
        });
      }
      if (request.apiKey === ApiKey.FETCH || request.apiKey === ApiKey.LIST_OFFSETS)
        lowerCurrentEpochs(request.body, leaderEpoch);
      return undefined;
    });
  });
  after(async () => {
    await setup?.stop();
  });
  beforeEach(() => {
    shownEpoch = leaderEpoch;
    truncatedAt = null;
    deposedAt = null;
    asked.length = 0;
  });

  function reader(options: Partial<ConsumerOptions> = {}): Consumer {
    const consumer = new Consumer({
      bootstrapServers,
      autoOffsetReset: 'earliest',
      metadataMaxAgeMs: 200,
      fetchMaxWaitMs: 100,
      ...options,
    });
    consumer.assign([tp]);
    return consumer;
  }

  async function readAll(consumer: Consumer): Promise<void> {
    let seen = 0;
    const deadline = Date.now() + 5000;
    while (seen < RECORDS && Date.now() < deadline) seen += (await consumer.poll(100)).length;
    assert.equal(seen, RECORDS, 'every record was read');
  }

  async function pollFor(consumer: Consumer, ms: number): Promise<ConsumerRecord[]> {
    const out: ConsumerRecord[] = [];
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) out.push(...(await consumer.poll(100)));
    return out;
  }

  it('a raised leader epoch makes the consumer validate its position, and a valid one reads on', async () => {
    const consumer = reader();
    try {
      await readAll(consumer);
      assert.deepEqual(asked, [], 'a reset position without an epoch is not validated');
      shownEpoch = leaderEpoch + 1;
      assert.deepEqual(await pollFor(consumer, 1000), [], 'nothing is read again');
      assert.ok(asked.length > 0, 'OffsetsForLeaderEpoch was sent after the epoch change');
      assert.deepEqual(asked[0], { leaderEpoch, currentLeaderEpoch: leaderEpoch + 1 });
      assert.equal(await consumer.position(tp), RECORDS, 'the position stays');
    } finally {
      await consumer.close();
    }
  });

  it('a log that ends the epoch below the position: the consumer reads on from the divergent offset', async () => {
    const consumer = reader();
    try {
      await readAll(consumer);
      truncatedAt = 2;
      shownEpoch = leaderEpoch + 1;
      const again = await pollFor(consumer, 1000);
      assert.ok(asked.length > 0, 'OffsetsForLeaderEpoch was sent after the epoch change');
      assert.deepEqual(
        again.map((r) => r.offset),
        [2, 3, 4],
        'the records from the divergent offset on',
      );
    } finally {
      await consumer.close();
    }
  });

  it('with auto.offset.reset=none the truncation is thrown as LogTruncationError', async () => {
    const consumer = reader({ autoOffsetReset: 'none', groupId: 'leader-epoch-change-none' });
    try {
      await consumer.commit([{ ...tp, offset: 0 }]);
      await readAll(consumer);
      truncatedAt = 3;
      shownEpoch = leaderEpoch + 1;
      const err = await pollFor(consumer, 2000).then(
        () => assert.fail('poll() returned without an error'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LogTruncationError, `a LogTruncationError, not ${String(err)}`);
      assert.deepEqual(err.offsetOutOfRangePartitions.get(`${TOPIC}-0`), RECORDS);
      assert.deepEqual(err.divergentOffsets.get(`${TOPIC}-0`), { ...tp, offset: 3, leaderEpoch });
    } finally {
      await consumer.close();
    }
  });

  it('metadata with an older leader epoch than one seen is not taken (a lagging or deposed broker)', async () => {
    // As Kafka's Metadata.updateLatestMetadata: a partition's metadata from a broker that has not heard of the
    // newest election is ignored. Taken, it made the consumer validate its position against the old leader, which
    // answers that it does not know the position's epoch, and auto.offset.reset=latest then skipped the records
    // in between (a chaos run's read-process-write lost a transaction's inputs so).
    const consumer = reader({ autoOffsetReset: 'latest' });
    const producer = new Producer({ bootstrapServers });
    try {
      consumer.seek(tp, 0);
      await readAll(consumer);
      shownEpoch = leaderEpoch + 1;
      await pollFor(consumer, 600);
      assert.ok(asked.length > 0, 'the newer epoch was seen (the position validated against it)');
      asked.length = 0;
      // Paused, the new records wait in the log unfetched while the older metadata comes in.
      consumer.pause([tp]);
      await producer.sendBatch(
        [5, 6, 7].map((i) => ({ topic: TOPIC, partition: 0, value: Buffer.from(`${i}`) })),
      );
      deposedAt = leaderEpoch;
      shownEpoch = leaderEpoch;
      await pollFor(consumer, 800);
      consumer.resume([tp]);
      const next = await pollFor(consumer, 1500);
      assert.deepEqual(
        next.map((r) => r.offset),
        [5, 6, 7],
        'the consumer reads on from its position',
      );
      assert.deepEqual(asked, [], 'no validation against the older epoch');
      assert.equal(consumer.cluster.leaderEpochOf(TOPIC, 0), leaderEpoch + 1, 'the newer epoch is kept');
    } finally {
      await producer.close();
      await consumer.close();
    }
  });
});
