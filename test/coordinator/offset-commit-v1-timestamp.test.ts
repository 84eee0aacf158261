// OffsetCommit v1 carries a commit timestamp per partition. As Kafka (GroupCoordinatorAdapter.commitOffsets,
// OffsetAndMetadata.fromRequest), only -1 (OffsetCommitRequest.DEFAULT_TIMESTAMP) means "now"; any other value,
// another negative one included, is stored as sent (offset expiry then counts from it).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeGroupRecord } from '../../src/coordinator/group/group-records.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'v1-stamps';

describe('OffsetCommit v1 commit timestamps', () => {
  let broker: BrokerProcess;
  before(async () => {
    broker = await startBroker({ overrides: { 'offsets.topic.num.partitions': 1 } });
    await createTopicOn(broker, TOPIC, { numPartitions: 3, replicationFactor: 1 });
  });
  after(async () => {
    await broker?.stop();
  });

  it('replaces only -1 with the time of the commit', async () => {
    const groupId = 'v1-stamps-group';
    const stamps = [-1n, -2n, 1234n];
    const started = BigInt(Date.now());
    const answer = await callCoordinator(
      () => [broker],
      0,
      groupId,
      ApiKey.OFFSET_COMMIT,
      1,
      {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        topics: [
          {
            name: TOPIC,
            partitions: stamps.map((commitTimestamp, partitionIndex) => ({
              partitionIndex,
              committedOffset: 3n,
              commitTimestamp,
              committedMetadata: '',
            })),
          },
        ],
      },
      (r) => r.topics[0].partitions[0].errorCode,
    );
    assert.deepEqual(
      answer.topics[0].partitions.map((p: { errorCode: number }) => p.errorCode),
      [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE],
    );
    const client = await WireClient.connect(broker.host, broker.port);
    const written = new Map<number, bigint>();
    try {
      for (const r of await readPartition(client, '__consumer_offsets', 0)) {
        if (r.key === null || r.key.length === 4) continue;
        const record = decodeGroupRecord(r.key, r.value);
        if (record.kind === 'offset' && record.group === groupId && record.value !== null)
          written.set(record.partition, record.value.commitTimestamp);
      }
    } finally {
      client.close();
    }
    const now = written.get(0)!;
    assert.ok(now >= started && now <= BigInt(Date.now()), `commit timestamp of -1: ${now}`);
    assert.equal(written.get(1), -2n);
    assert.equal(written.get(2), 1234n);
  });
});
