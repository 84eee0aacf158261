// OffsetCommit, TxnOffsetCommit and an admin client's AlterConsumerGroupOffsets (an OffsetCommit) for a topic or a
// partition that does not exist: those partitions are answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka 3.x's
// KafkaApis does, the others are committed, and __consumer_offsets gets no record for the unknown ones.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '@platformatic/kafka';
import { Producer } from '../../src/client/producer.js';
import { decodeGroupRecord } from '../../src/coordinator/group/group-records.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopicOn } from '../helpers/test-cluster.js';
import { callCoordinator, fetchOffset, transactionCompleted } from '../helpers/txn-session.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const KNOWN = 'known-topic';
const MISSING = 'missing-topic';

function commitBody(groupId: string, topics: { name: string; partitions: number[] }[]) {
  return {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: 5n,
        committedLeaderEpoch: -1,
        commitTimestamp: -1n,
        committedMetadata: '',
      })),
    })),
  };
}

/** [topic, partition, error] of every partition of an OffsetCommit or TxnOffsetCommit answer. */
function errors(response: {
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}) {
  return response.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.partitionIndex, p.errorCode]));
}

describe('offset commits for unknown topics and partitions', () => {
  let broker: BrokerProcess;
  const brokers = () => [broker];
  before(async () => {
    broker = await startBroker({
      overrides: {
        'offsets.topic.num.partitions': 1,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
      },
    });
    await createTopicOn(broker, KNOWN, { numPartitions: 2, replicationFactor: 1 });
  });
  after(async () => {
    await broker?.stop();
  });

  /** The topics named by the offset records of __consumer_offsets (one partition here). */
  async function committedTopics(): Promise<Set<string>> {
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const topics = new Set<string>();
      for (const r of await readPartition(client, '__consumer_offsets', 0)) {
        // Transaction markers' control records (a 4-byte key) are no group records.
        if (r.key === null || r.key.length === 4) continue;
        const record = decodeGroupRecord(r.key, r.value);
        if (record.kind === 'offset') topics.add(`${record.topic}-${record.partition}`);
      }
      return topics;
    } finally {
      client.close();
    }
  }

  it('OffsetCommit answers UNKNOWN_TOPIC_OR_PARTITION per partition and commits the rest', async () => {
    const body = commitBody('unknown-plain', [
      { name: KNOWN, partitions: [0, 1, 7] },
      { name: MISSING, partitions: [0] },
    ]);
    const commit = (version: number) =>
      callCoordinator(brokers, 0, 'unknown-plain', ApiKey.OFFSET_COMMIT, version, body, () => {
        return 0;
      });
    for (const version of [2, 8]) {
      assert.deepEqual(errors(await commit(version)), [
        [KNOWN, 0, E.NONE],
        [KNOWN, 1, E.NONE],
        [KNOWN, 7, E.UNKNOWN_TOPIC_OR_PARTITION],
        [MISSING, 0, E.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
    }
    // Only unknown partitions: answered without the coordinator.
    const none = await callCoordinator(
      brokers,
      0,
      'unknown-only',
      ApiKey.OFFSET_COMMIT,
      8,
      commitBody('unknown-only', [{ name: MISSING, partitions: [0, 1] }]),
      () => 0,
    );
    assert.deepEqual(errors(none), [
      [MISSING, 0, E.UNKNOWN_TOPIC_OR_PARTITION],
      [MISSING, 1, E.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    assert.deepEqual(await fetchOffset(brokers, 'unknown-plain', KNOWN, 1, false), [E.NONE, 5]);
    assert.deepEqual(await fetchOffset(brokers, 'unknown-plain', MISSING, 0, false), [E.NONE, -1]);
    const written = await committedTopics();
    assert.ok(written.has(`${KNOWN}-0`));
    assert.ok(!written.has(`${KNOWN}-7`) && !written.has(`${MISSING}-0`), [...written].join(','));
  });

  it('TxnOffsetCommit answers UNKNOWN_TOPIC_OR_PARTITION per partition and commits the rest', async () => {
    const groupId = 'unknown-txn-group';
    const txn = new Producer({ bootstrapServers: broker.bootstrap, transactionalId: 'unknown-txn' });
    try {
      await txn.initTransactions();
      txn.beginTransaction();
      // The client retries UNKNOWN_TOPIC_OR_PARTITION (a log may be loading): the group joins the transaction
      // through it (AddOffsetsToTxn), and the mixed commit goes over the wire with its id and epoch, to see the
      // answer per partition.
      await txn.sendOffsetsToTransaction([{ topic: KNOWN, partition: 1, offset: 8 }], groupId);
      const { producerId, producerEpoch } = txn.producerIdAndEpoch;
      const offsets = [
        { name: KNOWN, partitions: [0, 4] },
        { name: `${MISSING}-txn`, partitions: [0] },
      ];
      const answer = await callCoordinator(
        brokers,
        0,
        groupId,
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        {
          transactionalId: 'unknown-txn',
          groupId,
          producerId: BigInt(producerId),
          producerEpoch,
          generationId: -1,
          memberId: '',
          groupInstanceId: null,
          topics: offsets.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((partitionIndex) => ({
              partitionIndex,
              committedOffset: 9n,
              committedLeaderEpoch: -1,
              committedMetadata: 'm9',
            })),
          })),
        },
        () => 0,
      );
      assert.deepEqual(errors(answer), [
        [KNOWN, 0, E.NONE],
        [KNOWN, 4, E.UNKNOWN_TOPIC_OR_PARTITION],
        [`${MISSING}-txn`, 0, E.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
      await txn.commitTransaction();
    } finally {
      await txn.close();
    }
    await transactionCompleted(brokers, 'unknown-txn', true);
    assert.deepEqual(await fetchOffset(brokers, groupId, KNOWN, 0, true), [E.NONE, 9]);
    assert.deepEqual(await fetchOffset(brokers, groupId, KNOWN, 1, true), [E.NONE, 8]);
    const written = await committedTopics();
    assert.ok(!written.has(`${KNOWN}-4`) && !written.has(`${MISSING}-txn-0`), [...written].join(','));
  });

  it("an admin client's AlterConsumerGroupOffsets (@platformatic/kafka) fails for an unknown topic", async () => {
    const admin = new Admin({ clientId: 'unknown-topics', bootstrapBrokers: [broker.bootstrap], retries: 0 });
    try {
      await assert.rejects(
        admin.alterConsumerGroupOffsets({
          groupId: 'unknown-admin',
          topics: [{ name: `${MISSING}-admin`, partitionOffsets: [{ partition: 0, offset: 3n }] }],
        }),
        (err: Error & { errors?: Error[] }) => {
          const text = JSON.stringify(err, Object.getOwnPropertyNames(err)) + String(err.errors?.map(String));
          // The client's text for error 3, UNKNOWN_TOPIC_OR_PARTITION, from the OffsetCommit answer.
          assert.match(text, /does not host this topic-partition/);
          return true;
        },
      );
      await admin.alterConsumerGroupOffsets({
        groupId: 'unknown-admin',
        topics: [{ name: KNOWN, partitionOffsets: [{ partition: 1, offset: 3n }] }],
      });
    } finally {
      await admin.close();
    }
    assert.deepEqual(await fetchOffset(brokers, 'unknown-admin', KNOWN, 1, false), [E.NONE, 3]);
    assert.ok(!(await committedTopics()).has(`${MISSING}-admin-0`));
  });
});
