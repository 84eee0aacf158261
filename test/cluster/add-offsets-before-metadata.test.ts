// A group's first transactional offset commit on a fresh cluster, while the transaction coordinator's metadata does
// not show __consumer_offsets yet (the controller's UpdateMetadata naming it has not reached that broker).
//
// Kafka's AddOffsetsToTxn computes the group's partition from the partition count alone and adds it to the
// transaction without looking at the metadata cache, so it answers NONE. Answering UNKNOWN_TOPIC_OR_PARTITION
// instead is fatal to Java producers before 3.4 ("Unexpected error in AddOffsetsToTxnResponse"). And the
// commit's marker for that partition must wait for the metadata rather than be skipped as if the topic were
// deleted: skipped, the offsets of the transaction stay pending in the group for ever.
//
// Two brokers in this process share a ZooKeeper; the transaction coordinator is the one that is not the
// controller, and its request interceptor holds the UpdateMetadata that names __consumer_offsets.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { UpdateMetadataRequest } from '../../src/protocol/messages/06-update-metadata.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { agreedController, waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { txnOffsetCommitBody, untilSettled } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper } from '../helpers/zookeeper.js';

const OFFSETS_TOPIC = '__consumer_offsets';
const INPUT = 'first-commit-input';
const GROUP = 'first-commit-group';

function namesOffsetsTopic(request: UpdateMetadataRequest): boolean {
  return (
    request.topicStates.some((t) => t.topicName === OFFSETS_TOPIC) ||
    request.ungroupedPartitionStates.some((p) => p.topicName === OFFSETS_TOPIC)
  );
}

it('AddOffsetsToTxn before the coordinator knows __consumer_offsets adds the group, and the commit marker waits for the metadata', async () => {
  const zk = await startTestZooKeeper();
  const brokers: InProcessBroker[] = [];
  const clients: WireClient[] = [];
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  try {
    for (const id of [0, 1]) {
      brokers.push(
        await startInProcessBroker({
          'broker.id': id,
          'zookeeper.connect': zk.connect,
          'transaction.state.log.num.partitions': 2,
          'transaction.state.log.replication.factor': 1,
          'transaction.state.log.min.isr': 1,
          'offsets.topic.num.partitions': 1,
          // The TxnOffsetCommit below is not verified (KIP-890): Kafka's coordinator answers a verifyOnly
          // AddPartitionsToTxn for a partition its metadata cache lacks UNKNOWN_TOPIC_OR_PARTITION, and the group
          // coordinator retries the commit (COORDINATOR_NOT_AVAILABLE) until the held metadata arrives. What this
          // test is about, AddOffsetsToTxn and the marker, does not depend on it.
          'transaction.partition.verification.enable': false,
        }),
      );
    }
    const connect = async (id: number): Promise<WireClient> => {
      const client = await WireClient.connect(brokers[id]!.host, brokers[id]!.port);
      clients.push(client);
      return client;
    };
    const wire = await connect(0);
    const metadataOf = (client: WireClient, topics: string[]) =>
      client.call(ApiKey.METADATA, 9, {
        topics: topics.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })),
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
    const controller = await agreedController(brokers);
    const coordinatorId = 1 - controller;
    await createTopic(wire, INPUT, { numPartitions: 1, replicationFactor: 1 });

    // __transaction_state's two partitions go one to each broker: take an id coordinated by the non-controller.
    const transactionalId = await waitFor(
      'an id coordinated by the broker that is not the controller',
      async () => {
        for (let i = 0; i < 20; i++) {
          const id = `first-commit-${i}`;
          const r = await wire.call(ApiKey.FIND_COORDINATOR, 4, {
            key: '',
            keyType: 1,
            coordinatorKeys: [id],
          });
          const c = r.coordinators[0];
          if (c.errorCode !== ErrorCode.NONE) return undefined;
          if (c.nodeId === coordinatorId) return id;
        }
        return undefined;
      },
    );
    const coordinator = await connect(coordinatorId);
    await waitFor(`${INPUT} in the coordinator's metadata`, async () => {
      const m = await metadataOf(coordinator, [INPUT]);
      return m.topics[0].errorCode === ErrorCode.NONE ? true : undefined;
    });
    const init = await untilSettled(
      () =>
        coordinator.call(ApiKey.INIT_PRODUCER_ID, 4, {
          transactionalId,
          transactionTimeoutMs: 60_000,
          producerId: -1n,
          producerEpoch: -1,
        }),
      (r) => r.errorCode,
    );
    assert.equal(init.errorCode, ErrorCode.NONE, 'InitProducerId');
    const producer = { transactionalId, producerId: init.producerId, producerEpoch: init.producerEpoch };

    // From here the coordinator does not hear of __consumer_offsets until the test releases the gate.
    let held = 0;
    brokers[coordinatorId]!.interception.set(
      onKey<UpdateMetadataRequest>(ApiKey.UPDATE_METADATA, async (request) => {
        if (namesOffsetsTopic(request.body)) {
          held++;
          await gate;
        }
        return request.handle();
      }),
    );
    // The group's FindCoordinator at the controller creates __consumer_offsets; its answer waits for the
    // controller's requests, the held one included, so it is not awaited.
    const creator = await connect(controller);
    creator.send(ApiKey.FIND_COORDINATOR, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] });
    const groupLeader = await waitFor(`${OFFSETS_TOPIC} in the controller's metadata`, async () => {
      const m = await metadataOf(wire, [OFFSETS_TOPIC]);
      const leader =
        m.topics[0].errorCode === ErrorCode.NONE ? m.topics[0].partitions[0]?.leaderId : undefined;
      return leader !== undefined && leader >= 0 ? (leader as number) : undefined;
    });
    await waitFor('the UpdateMetadata to the coordinator held', async () => (held > 0 ? true : undefined));
    assert.equal(
      (await metadataOf(coordinator, [OFFSETS_TOPIC])).topics[0].errorCode,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      `the coordinator's metadata has no ${OFFSETS_TOPIC} yet`,
    );

    const added = await untilSettled(
      () => coordinator.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, { ...producer, groupId: GROUP }),
      (r) => r.errorCode,
    );
    assert.equal(added.errorCode, ErrorCode.NONE, 'AddOffsetsToTxn adds the group without the metadata');

    const groupCoordinator = await connect(groupLeader);
    const committed = await untilSettled(
      () =>
        groupCoordinator.call(ApiKey.TXN_OFFSET_COMMIT, 3, txnOffsetCommitBody(producer, GROUP, INPUT, 42n)),
      (r) => r.topics[0].partitions[0].errorCode,
    );
    assert.equal(committed.topics[0].partitions[0].errorCode, ErrorCode.NONE, 'TxnOffsetCommit');

    const ended = await coordinator.call(ApiKey.END_TXN, 3, { ...producer, committed: true });
    assert.equal(ended.errorCode, ErrorCode.NONE, 'EndTxn');
    const stateOfTransaction = async (): Promise<string> => {
      const d = await coordinator.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, {
        transactionalIds: [transactionalId],
      });
      return d.transactionStates[0].transactionState as string;
    };
    // The marker cannot be written before the coordinator knows the partition's leader: the transaction stays
    // PrepareCommit (it used to be skipped, and the commit completed without it).
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(await stateOfTransaction(), 'PrepareCommit', 'the marker waits for the metadata');

    release();
    await waitFor('the commit complete', async () =>
      (await stateOfTransaction()) === 'CompleteCommit' ? true : undefined,
    );
    const fetched = await waitFor('a stable offset', async () => {
      const r = await groupCoordinator.call(ApiKey.OFFSET_FETCH, 7, {
        groupId: GROUP,
        topics: [{ name: INPUT, partitionIndexes: [0] }],
        requireStable: true,
        groups: [],
      });
      // A group-level error comes at the top, with no partitions.
      const p = r.topics[0]?.partitions[0];
      return r.errorCode === ErrorCode.NONE && p?.errorCode === ErrorCode.NONE ? p : undefined;
    });
    assert.equal(Number(fetched.committedOffset), 42, 'the transaction committed the group offset');
  } finally {
    release();
    for (const c of clients) c.close();
    for (const b of brokers.reverse()) await b.stop().catch(() => {});
    await zk.stop();
  }
});
