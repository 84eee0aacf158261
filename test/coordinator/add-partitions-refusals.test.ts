// AddPartitionsToTxn v0-v3 refusals over the wire, in Kafka 3.x's order (KafkaApis.handleAddPartitionsToTxnRequest):
// per partition, TOPIC_AUTHORIZATION_FAILED for a topic without WRITE and for an internal topic (never authorized
// for a client, with or without an authorizer, super users included), then UNKNOWN_TOPIC_OR_PARTITION for a
// partition the metadata does not show, and OPERATION_NOT_ATTEMPTED for the partitions that passed. Brook answered
// OPERATION_NOT_ATTEMPTED for unknown partitions when another topic was refused, and let a client add a partition
// of __consumer_offsets or __transaction_state to its transaction.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { AclOperation as Op, ResourceType as RT } from '../../src/security/authorizer/acl-types.js';
import { type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { initTransactionalId } from '../helpers/txn-session.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;

/** AddPartitionsToTxn v3 of [topic, partition] pairs; answers "topic-partition" to error code. */
async function addPartitions(
  client: WireClient,
  transactionalId: string,
  producer: { producerId: bigint; producerEpoch: number },
  partitions: [string, number][],
): Promise<Record<string, number>> {
  const byTopic = new Map<string, number[]>();
  for (const [topic, p] of partitions) byTopic.set(topic, [...(byTopic.get(topic) ?? []), p]);
  const r = await client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
    transactions: [],
    v3AndBelowTransactionalId: transactionalId,
    v3AndBelowProducerId: producer.producerId,
    v3AndBelowProducerEpoch: producer.producerEpoch,
    v3AndBelowTopics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps })),
  });
  const codes: Record<string, number> = {};
  for (const t of r.resultsByTopicV3AndBelow) {
    for (const p of t.resultsByPartition) codes[`${t.name}-${p.partitionIndex}`] = p.partitionErrorCode;
  }
  return codes;
}

async function waitForTopic(client: WireClient, topic: string): Promise<void> {
  await untilValue(`${topic} in the metadata`, async () => {
    const md = await client.call(ApiKey.METADATA, 9, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: topic }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    return md.topics[0].errorCode === E.NONE && md.topics[0].partitions.length > 0 ? true : null;
  });
}

describe('AddPartitionsToTxn of an internal topic, without an authorizer', () => {
  let broker: InProcessBroker;
  let client: WireClient;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, 'plain-t', { numPartitions: 1 });
    await waitForTopic(client, 'plain-t');
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('refuses __consumer_offsets and __transaction_state with TOPIC_AUTHORIZATION_FAILED', async () => {
    // initTransactionalId's FindCoordinator creates __transaction_state; a group's FindCoordinator the offsets topic.
    const producer = await initTransactionalId(client, 'internal-adder');
    const found = await untilValue('__consumer_offsets', async () => {
      const r = await client.call(ApiKey.FIND_COORDINATOR, 3, { key: 'g', keyType: 0 });
      return r.errorCode === E.NONE ? r : null;
    });
    assert.equal(found.errorCode, E.NONE);
    await waitForTopic(client, '__consumer_offsets');
    const answer = await addPartitions(client, 'internal-adder', producer, [
      ['plain-t', 0],
      ['__consumer_offsets', 0],
      ['__transaction_state', 0],
    ]);
    assert.deepEqual(answer, {
      'plain-t-0': E.OPERATION_NOT_ATTEMPTED,
      '__consumer_offsets-0': E.TOPIC_AUTHORIZATION_FAILED,
      '__transaction_state-0': E.TOPIC_AUTHORIZATION_FAILED,
    });
    // Nothing was added: the known topic alone goes in afterwards.
    assert.deepEqual(await addPartitions(client, 'internal-adder', producer, [['plain-t', 0]]), {
      'plain-t-0': E.NONE,
    });
  });
});

describe('AddPartitionsToTxn with a topic refused by the ACLs', () => {
  let b: AclBroker;
  let admin: WireClient;
  let bob: WireClient;

  before(async () => {
    b = await startAclBroker();
    admin = await b.admin();
    for (const t of ['ok-t', 'denied-t']) {
      await createTopic(admin, t, { numPartitions: 1 });
      await waitForTopic(admin, t);
    }
    await addAcls(admin, [
      {
        resourceType: RT.TRANSACTIONAL_ID,
        resourceName: 'bob-txn',
        principal: 'User:bob',
        operation: Op.WRITE,
      },
      { resourceType: RT.TOPIC, resourceName: 'ok-t', principal: 'User:bob', operation: Op.WRITE },
      // A topic bob may write that does not exist.
      { resourceType: RT.TOPIC, resourceName: 'missing-t', principal: 'User:bob', operation: Op.WRITE },
    ]);
    bob = await b.as('bob');
  });
  after(async () => {
    bob?.close();
    admin?.close();
    await b?.broker.stop();
  });

  it('answers TOPIC_AUTHORIZATION_FAILED, then UNKNOWN_TOPIC_OR_PARTITION, then OPERATION_NOT_ATTEMPTED', async () => {
    const answer = await addPartitions(bob, 'bob-txn', { producerId: 1n, producerEpoch: 0 }, [
      ['ok-t', 0],
      ['ok-t', 7],
      ['denied-t', 0],
      ['missing-t', 0],
      ['no-acl-missing-t', 0],
    ]);
    assert.deepEqual(answer, {
      'ok-t-0': E.OPERATION_NOT_ATTEMPTED,
      'ok-t-7': E.UNKNOWN_TOPIC_OR_PARTITION,
      'denied-t-0': E.TOPIC_AUTHORIZATION_FAILED,
      'missing-t-0': E.UNKNOWN_TOPIC_OR_PARTITION,
      // Authorization comes first: a topic bob may not write is refused as such, existing or not.
      'no-acl-missing-t-0': E.TOPIC_AUTHORIZATION_FAILED,
    });
  });
});
