// The leader's high watermark does not move while the ISR is smaller than min.insync.replicas (Kafka 3.7+,
// KAFKA-15583, in ZooKeeper mode as in KRaft): a record below the high watermark is on at least min.insync.replicas
// replicas. An acks=1 write taken while the ISR is the leader alone stays in the leader's log, invisible to consumers
// (read_uncommitted and read_committed) and to ListOffsets' latest offset, until a follower rejoins the ISR.
//
// The leader runs the controller, so that it can take the two killed followers out of the ISR when their ZooKeeper
// sessions end.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import type { BrokerProcess } from '../helpers/broker-process.js';
import { agreedController, partitionView, produceValues, waitFor } from '../helpers/cluster.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { consumerFetchBody, fetchPartition, produceBatch, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'hw-min-isr';
const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;
const LATEST = -1n;
/** How long a consumer's fetch waits for a record above its offset: long enough for the high watermark to move. */
const FETCH_WAIT_MS = 1000;
/** The max wait of a fetch past the high watermark, which must be answered well before it. */
const AHEAD_WAIT_MS = 5000;

interface Fetched {
  highWatermark: number;
  lastStableOffset: number;
  values: string[];
}

/** One consumer fetch of partition 0 from `offset`, waiting up to FETCH_WAIT_MS for a record. */
async function fetchFrom(client: WireClient, offset: number, isolationLevel: number): Promise<Fetched> {
  const body = consumerFetchBody([{ topic: TOPIC, partitions: [fetchPartition(0, offset)] }], {
    maxWaitMs: FETCH_WAIT_MS,
    minBytes: 1,
  });
  const response = await client.call(ApiKey.FETCH, 12, { ...body, isolationLevel });
  const data = response.responses[0].partitions[0];
  assert.equal(data.errorCode, ErrorCode.NONE);
  const bytes: Buffer = data.records;
  const values: string[] = [];
  for (let pos = 0; pos + 12 <= bytes.length; pos += 12 + bytes.readInt32BE(pos + 8)) {
    for (const r of readRecords(bytes, pos)) if (r.offset >= offset) values.push(r.value!.toString());
  }
  return {
    highWatermark: Number(data.highWatermark),
    lastStableOffset: Number(data.lastStableOffset),
    values,
  };
}

/** The error of a ListOffsets (latest, read_uncommitted) naming `currentLeaderEpoch`. */
async function latestOffsetError(client: WireClient, currentLeaderEpoch: number): Promise<number> {
  const response = await client.call(ApiKey.LIST_OFFSETS, 7, {
    replicaId: -1,
    isolationLevel: READ_UNCOMMITTED,
    topics: [
      {
        name: TOPIC,
        partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp: LATEST, maxNumOffsets: 1 }],
      },
    ],
    timeoutMs: 5000,
  });
  return response.topics[0].partitions[0].errorCode;
}

async function latestOffset(client: WireClient, isolationLevel: number): Promise<number> {
  const response = await client.call(ApiKey.LIST_OFFSETS, 7, {
    replicaId: -1,
    isolationLevel,
    topics: [
      {
        name: TOPIC,
        partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: LATEST, maxNumOffsets: 1 }],
      },
    ],
    timeoutMs: 5000,
  });
  const p = response.topics[0].partitions[0];
  assert.equal(p.errorCode, ErrorCode.NONE);
  return Number(p.offset);
}

describe('the high watermark while the ISR is smaller than min.insync.replicas (KAFKA-15583)', () => {
  let cluster: TestCluster | undefined;
  before(async () => {
    cluster = await startCluster({
      overrides: {
        // The killed followers leave the ISR when their sessions end, 6 s after.
        'zookeeper.session.timeout.ms': 6000,
        // and not for lag before that.
        'replica.lag.time.max.ms': 60_000,
      },
    });
  });
  after(() => cluster?.stop());

  it('keeps an acks=1 write invisible until a follower rejoins the ISR', { timeout: 120_000 }, async () => {
    const brokers = cluster!.brokers;
    const leaderId = await agreedController(brokers);
    const [firstId, secondId] = [0, 1, 2].filter((id) => id !== leaderId) as [number, number];
    const leader: BrokerProcess = brokers[leaderId]!;
    await createTopicOn(leader, TOPIC, {
      assignments: { 0: [leaderId, firstId, secondId] },
      configs: { 'min.insync.replicas': '2' },
    });
    await waitFor('the preferred leader with a full ISR', async () => {
      const v = await partitionView(leader, TOPIC);
      return v?.leaderId === leaderId && v.isrNodes.length === 3 ? v : undefined;
    });
    assert.deepEqual(await produceValues(leader, TOPIC, ['committed']), [ErrorCode.NONE]);

    await Promise.all([brokers[firstId]!.kill(), brokers[secondId]!.kill()]);
    const shrunk = await waitFor(
      'the ISR to be the leader alone',
      async () => {
        const v = await partitionView(leader, TOPIC);
        return v?.leaderId === leaderId && v.isrNodes.length === 1 ? v : undefined;
      },
      30_000,
    );

    const client = await WireClient.connect(leader.host, leader.port);
    try {
      // The metadata answer can come before the leader has applied the LeaderAndIsr of the shrunk ISR, whose new
      // leader epoch starts at the log end: a record written before that would lie below the epoch's start and
      // ListOffsets would answer OFFSET_NOT_AVAILABLE (KIP-207). The leader serves that epoch once it answers a
      // ListOffsets naming it without UNKNOWN_LEADER_EPOCH.
      await waitFor('the leader at the shrunk ISR epoch', async () => {
        const code = await latestOffsetError(client, shrunk.leaderEpoch);
        return code === ErrorCode.NONE ? true : undefined;
      });
      const written = await produceBatch(client, TOPIC, buildBatch([{ value: 'short' }]), 1);
      assert.equal(written.errorCode, ErrorCode.NONE, 'acks=1 does not need the ISR');
      assert.equal(Number(written.baseOffset), 1);
      for (const isolation of [READ_UNCOMMITTED, READ_COMMITTED]) {
        assert.deepEqual(
          await fetchFrom(client, 1, isolation),
          { highWatermark: 1, lastStableOffset: 1, values: [] },
          `isolation ${isolation}: the record is on the leader alone`,
        );
        assert.equal(await latestOffset(client, isolation), 1, `isolation ${isolation}: latest offset`);
      }
      // A fetch past the high watermark (a consumer ahead of a new leader's) waits for nothing, as Kafka's
      // DelayedFetch answers a fetch offset above the offset it may read to at once.
      const started = Date.now();
      const ahead = await client.call(ApiKey.FETCH, 12, {
        ...consumerFetchBody([{ topic: TOPIC, partitions: [fetchPartition(0, 2)] }], {
          maxWaitMs: AHEAD_WAIT_MS,
          minBytes: 1,
        }),
        isolationLevel: READ_UNCOMMITTED,
      });
      const elapsed = Date.now() - started;
      assert.equal(ahead.responses[0].partitions[0].errorCode, ErrorCode.NONE);
      assert.equal(
        ahead.responses[0].partitions[0].records?.length ?? 0,
        0,
        'nothing past the high watermark',
      );
      assert.ok(
        elapsed < AHEAD_WAIT_MS / 2,
        `a fetch past the high watermark is answered at once (${elapsed} ms)`,
      );
      const refused = await produceBatch(client, TOPIC, buildBatch([{ value: 'all' }]), -1);
      assert.equal(refused.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);

      // One follower comes back, catches up and rejoins: two in the ISR, the record is committed.
      await cluster!.start(firstId);
      await waitFor(
        'the restarted follower back in the ISR',
        async () => {
          const v = await partitionView(leader, TOPIC);
          return v?.isrNodes.length === 2 ? v : undefined;
        },
        30_000,
      );
      for (const isolation of [READ_UNCOMMITTED, READ_COMMITTED]) {
        const fetched = await waitFor(`isolation ${isolation}: the record`, async () => {
          const f = await fetchFrom(client, 1, isolation);
          return f.values.length > 0 ? f : undefined;
        });
        assert.deepEqual(fetched, { highWatermark: 2, lastStableOffset: 2, values: ['short'] });
        assert.equal(await latestOffset(client, isolation), 2, `isolation ${isolation}: latest offset`);
      }
    } finally {
      client.close();
    }
  });
});
