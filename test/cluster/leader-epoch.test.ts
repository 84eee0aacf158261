// The data-loss scenario that leader epochs fixed (KIP-101), reproduced with real brokers: a follower that has
// every record but a stale high watermark restarts, and the leader dies before the follower has fetched again.
// A follower that truncated to its high watermark would lose the records and then lead without them; Brook's
// follower truncates only to what the leader's epoch end offset says (OffsetForLeaderEpoch), so every record
// survives and the restarted follower leads with all of them.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { partitionView, waitFor } from '../helpers/cluster.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';

const TOPIC = 'kip101';

describe('leader epochs keep acknowledged records through a follower restart and a leader death (KIP-101)', () => {
  let zk: TestZooKeeper;
  const brokers: (BrokerProcess | null)[] = [null, null];
  const dataDirs = [
    mkdtempSync(join(tmpdir(), 'brook-kip101-0-')),
    mkdtempSync(join(tmpdir(), 'brook-kip101-1-')),
  ];
  const start = async (id: number): Promise<BrokerProcess> => {
    const b = await startBroker({
      dataDir: dataDirs[id],
      overrides: {
        'broker.id': id,
        'zookeeper.connect': zk.connect,
        'zookeeper.session.timeout.ms': 4000,
        'replica.fetch.wait.max.ms': 100,
        'min.insync.replicas': 1,
        'unclean.leader.election.enable': true,
        // The high watermark checkpoint stays behind the log, as it does between Kafka's periodic checkpoints.
        'replica.high.watermark.checkpoint.interval.ms': 3_600_000,
        'log.flush.offset.checkpoint.interval.ms': 3_600_000,
      },
    });
    brokers[id] = b;
    return b;
  };

  before(async () => {
    zk = await startTestZooKeeper();
    await start(0);
    await start(1);
  });
  after(async () => {
    for (const b of brokers) await b?.stop().catch(() => {});
    await zk?.stop();
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
  });

  it('the restarted follower keeps every record and leads with all of them', async () => {
    const first = brokers[0]!;
    const admin = await WireClient.connect(first.host, first.port);
    try {
      const created = await admin.call(ApiKey.CREATE_TOPICS, 5, {
        topics: [
          {
            name: TOPIC,
            numPartitions: -1,
            replicationFactor: -1,
            assignments: [{ partitionIndex: 0, brokerIds: [0, 1] }],
            configs: [],
          },
        ],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    } finally {
      admin.close();
    }
    await waitFor('broker 0 leading with both in sync', async () => {
      const v = await partitionView(first, TOPIC);
      return v?.leaderId === 0 && v.isrNodes.length === 2 ? v : undefined;
    });
    const client = await WireClient.connect(first.host, first.port);
    try {
      for (let i = 0; i < 10; i++) {
        const r = await client.call(ApiKey.PRODUCE, 9, {
          transactionalId: null,
          acks: -1,
          timeoutMs: 10_000,
          topicData: [
            { name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: `m${i}` }]) }] },
          ],
        });
        assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    // Follower 1 has all ten records (acks=all), but its high watermark checkpoint does not.
    await brokers[1]!.kill();
    const restarted = await start(1);
    // The leader dies before the restarted follower can fetch from it again.
    await brokers[0]!.kill();
    brokers[0] = null;
    await waitFor('the restarted follower leading', async () => {
      const v = await partitionView(restarted, TOPIC);
      return v?.leaderId === 1 ? v : undefined;
    });
    const reader = await WireClient.connect(restarted.host, restarted.port);
    try {
      const values = (await readPartition(reader, TOPIC, 0)).map((r) => r.value!.toString());
      assert.deepEqual(
        values,
        Array.from({ length: 10 }, (_, i) => `m${i}`),
      );
    } finally {
      reader.close();
    }
  });
});
