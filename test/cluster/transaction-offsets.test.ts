// Offsets committed inside a transaction (TxnOffsetCommit) are records of __consumer_offsets, pending until the
// transaction's marker: they survive a move of the group coordinator between TxnOffsetCommit and EndTxn (a broker
// restart, or the coordinator broker killed in a cluster), become the group's offsets on COMMIT and vanish on
// ABORT. While pending, OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for them and without it
// the offset committed before.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopicOn, startCluster, type TestCluster } from '../helpers/test-cluster.js';
import { callCoordinator, fetchOffset, transactionCompleted } from '../helpers/txn-session.js';

const TOPIC = 'txn-src';

/** A transactional producer with a transaction begun, its offsets to be sent with sendOffsetsToTransaction. */
async function transaction(bootstrap: string, transactionalId: string): Promise<Producer> {
  const producer = new Producer({ bootstrapServers: bootstrap, transactionalId, maxBlockMs: 60_000 });
  await producer.initTransactions();
  producer.beginTransaction();
  return producer;
}

/** Commits or aborts, then waits for the markers (the stable offsets are read next). */
async function end(
  brokers: () => readonly BrokerProcess[],
  producer: Producer,
  transactionalId: string,
  commit: boolean,
): Promise<void> {
  if (commit) await producer.commitTransaction();
  else await producer.abortTransaction();
  await transactionCompleted(brokers, transactionalId, commit);
}

const SINGLE = {
  'offsets.topic.num.partitions': 2,
  'transaction.state.log.num.partitions': 2,
  'transaction.state.log.replication.factor': 1,
  'transaction.state.log.min.isr': 1,
};

/** A plain OffsetCommit of `offset` for partition 0 of TOPIC outside any generation. */
async function commitPlain(brokers: () => readonly BrokerProcess[], groupId: string, offset: number) {
  const r = await callCoordinator(
    brokers,
    0,
    groupId,
    ApiKey.OFFSET_COMMIT,
    8,
    {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: TOPIC,
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: BigInt(offset),
              committedLeaderEpoch: -1,
              commitTimestamp: -1n,
              committedMetadata: '',
            },
          ],
        },
      ],
    },
    (x) => x.topics[0].partitions[0].errorCode,
  );
  assert.equal(r.topics[0].partitions[0].errorCode, ErrorCode.NONE);
}

describe('transactional offset commits across a broker restart', () => {
  let broker: BrokerProcess | undefined;
  let dataDir: string | undefined;
  const brokers = () => (broker === undefined ? [] : [broker]);
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'brook-txn-offsets-'));
    broker = await startBroker({ dataDir, overrides: SINGLE });
    await createTopicOn(broker, TOPIC, { numPartitions: 2, replicationFactor: 1 });
  });
  after(async () => {
    await broker?.stop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  async function restart(how: 'stop' | 'kill'): Promise<void> {
    assert.ok(broker);
    if (how === 'stop') await broker.stop();
    else await broker.kill();
    // The same port: the transaction's producer reconnects to it.
    broker = await startBroker({ dataDir, overrides: SINGLE, port: broker.port });
  }

  for (const [commit, how] of [
    [true, 'stop'],
    [false, 'kill'],
  ] as const) {
    it(`keeps pending offsets over a restart (${how}) and ${commit ? 'commits' : 'aborts'} them`, async (t) => {
      const groupId = `txn-group-${how}`;
      await commitPlain(brokers, groupId, 7);
      const txn = await transaction(broker!.bootstrap, `txn-${how}`);
      t.after(() => txn.close());
      await txn.sendOffsetsToTransaction(
        [
          { topic: TOPIC, partition: 0, offset: 42 },
          { topic: TOPIC, partition: 1, offset: 43 },
        ],
        groupId,
      );
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, true), [
        ErrorCode.UNSTABLE_OFFSET_COMMIT,
        -1,
      ]);
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, false), [ErrorCode.NONE, 7]);

      await restart(how);
      // Loaded from the log: still pending, the committed offset unchanged.
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, true), [
        ErrorCode.UNSTABLE_OFFSET_COMMIT,
        -1,
      ]);
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, false), [ErrorCode.NONE, 7]);

      await end(brokers, txn, `txn-${how}`, commit);
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, true), [
        ErrorCode.NONE,
        commit ? 42 : 7,
      ]);
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 1, true), [
        ErrorCode.NONE,
        commit ? 43 : -1,
      ]);

      // The marker is in the log: loading again gives the same offsets.
      await restart('kill');
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, true), [
        ErrorCode.NONE,
        commit ? 42 : 7,
      ]);
      assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 1, true), [
        ErrorCode.NONE,
        commit ? 43 : -1,
      ]);
    });
  }

  it('OffsetFetch: require_stable (v7+) sees pending transactional offsets, other fetches the committed offset', async (t) => {
    const groupId = 'txn-group-fetch';
    await commitPlain(brokers, groupId, 7);
    const txn = await transaction(broker!.bootstrap, 'txn-fetch');
    t.after(() => txn.close());
    await txn.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 42 }], groupId);
    const one = [{ name: TOPIC, partitionIndexes: [0, 1] }];
    const fetch = (version: number, body: object) =>
      callCoordinator(
        brokers,
        0,
        groupId,
        ApiKey.OFFSET_FETCH,
        version,
        { groupId: '', topics: [], groups: [], requireStable: false, ...body },
        (x) => x.errorCode,
      );
    const partitions = (
      topics: {
        name: string;
        partitions: { partitionIndex: number; errorCode: number; committedOffset: bigint }[];
      }[],
    ) =>
      topics
        .filter((t) => t.name === TOPIC)
        .flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.errorCode, Number(p.committedOffset)]));
    const unstable = [
      [0, ErrorCode.UNSTABLE_OFFSET_COMMIT, -1],
      [1, ErrorCode.NONE, -1],
    ];
    const stable = [
      [0, ErrorCode.NONE, 7],
      [1, ErrorCode.NONE, -1],
    ];
    // v6 has no require_stable: the committed offset.
    assert.deepEqual(partitions((await fetch(6, { groupId, topics: one })).topics), stable);
    assert.deepEqual(
      partitions((await fetch(7, { groupId, topics: one, requireStable: true })).topics),
      unstable,
    );
    assert.deepEqual(partitions((await fetch(7, { groupId, topics: one })).topics), stable);
    // All the group's offsets (null topics): the pending partition answers UNSTABLE_OFFSET_COMMIT too.
    assert.deepEqual(partitions((await fetch(7, { groupId, topics: null, requireStable: true })).topics), [
      [0, ErrorCode.UNSTABLE_OFFSET_COMMIT, -1],
    ]);
    // v8: per group.
    const v8 = (requireStable: boolean) =>
      fetch(8, { requireStable, groups: [{ groupId, memberId: null, memberEpoch: -1, topics: one }] });
    const grouped = await v8(true);
    assert.equal(grouped.groups[0].errorCode, ErrorCode.NONE);
    assert.deepEqual(partitions(grouped.groups[0].topics), unstable);
    assert.deepEqual(partitions((await v8(false)).groups[0].topics), stable);

    await end(brokers, txn, 'txn-fetch', true);
    assert.deepEqual(partitions((await fetch(7, { groupId, topics: one, requireStable: true })).topics), [
      [0, ErrorCode.NONE, 42],
      [1, ErrorCode.NONE, -1],
    ]);
  });
});

describe('transactional offset commits when the group coordinator broker dies', () => {
  let cluster: TestCluster | undefined;
  after(() => cluster?.stop());

  it('commits the offsets through the new coordinator', async (t) => {
    cluster = await startCluster({
      overrides: {
        'zookeeper.session.timeout.ms': 6000,
        'default.replication.factor': 3,
        'min.insync.replicas': 2,
        'offsets.topic.replication.factor': 3,
        'offsets.topic.num.partitions': 3,
        'transaction.state.log.num.partitions': 3,
      },
    });
    const c = cluster;
    await createTopicOn(c.brokers[0]!, TOPIC, { numPartitions: 1, replicationFactor: 3 });
    const alive = new Set(c.brokers);
    const brokers = () => [...alive];
    const groupId = 'txn-group-cluster';
    const txn = await transaction(c.brokers.map((b) => b.bootstrap).join(','), 'txn-cluster');
    t.after(() => txn.close());
    await txn.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 99 }], groupId);
    const found = await callCoordinator(
      brokers,
      0,
      groupId,
      ApiKey.FIND_COORDINATOR,
      4,
      { key: '', keyType: 0, coordinatorKeys: [groupId] },
      (x) => x.coordinators[0].errorCode,
    );
    const victim = c.brokers[found.coordinators[0].nodeId]!;
    await victim.kill();
    alive.delete(victim);

    await end(brokers, txn, 'txn-cluster', true);
    assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, true), [ErrorCode.NONE, 99]);
    assert.deepEqual(await fetchOffset(brokers, groupId, TOPIC, 0, false), [ErrorCode.NONE, 99]);
  });
});
