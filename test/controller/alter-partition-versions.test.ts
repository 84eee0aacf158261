// AlterPartition's error codes by version over the wire, as Kafka's controllers answer them (KafkaController's
// tryProcessAlterPartition in ZooKeeper mode, ReplicationControlManager in KRaft): KIP-841's errors come with v2,
// the version that introduced them, so a proposed ISR naming a replica that cannot join is INELIGIBLE_REPLICA
// from v2 and OPERATION_NOT_ATTEMPTED before; a topic named by an id the controller does not know (v2+) is
// UNKNOWN_TOPIC_ID, and one named by an unknown name (v0-v1) UNKNOWN_TOPIC_OR_PARTITION. Brook answered
// INELIGIBLE_REPLICA to v1 and UNKNOWN_TOPIC_OR_PARTITION to an unknown topic id.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { untilValue } from '../helpers/wait.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const TOPIC = 'alter-partition-versions';
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** A topic id no topic has. */
const UNKNOWN_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

describe('AlterPartition answers by version', () => {
  let broker: InProcessBroker;
  let client: WireClient;
  let topicId: string;

  before(async () => {
    broker = await startInProcessBroker();
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1 });
    topicId = await untilValue(`${TOPIC} led by broker 0`, async () => {
      const md = await client.call(ApiKey.METADATA, 12, {
        topics: [{ topicId: ZERO_UUID, name: TOPIC }],
        allowAutoTopicCreation: false,
        includeTopicAuthorizedOperations: false,
      });
      const t = md.topics[0];
      return t.errorCode === E.NONE && t.partitions[0]?.leaderId === 0 ? (t.topicId as string) : null;
    });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** Broker 0's registration epoch, which its AlterPartition requests must carry. */
  const brokerEpoch = () => BigInt((broker.broker as unknown as { brokerEpoch: number }).brokerEpoch);

  /** Broker 0's AlterPartition of a topic's partition 0 (name for v0-v1, id for v2+) to `isr`: the partition's code. */
  async function alter(
    version: number,
    topic: { name: string; id: string },
    isr: number[],
    epoch = brokerEpoch(),
  ): Promise<number> {
    const r = await client.call(ApiKey.ALTER_PARTITION, version, {
      brokerId: 0,
      brokerEpoch: epoch,
      topics: [
        {
          topicName: topic.name,
          topicId: topic.id,
          partitions: [
            {
              partitionIndex: 0,
              leaderEpoch: 0,
              newIsr: isr,
              newIsrWithEpochs: isr.map((brokerId) => ({ brokerId, brokerEpoch: -1n })),
              leaderRecoveryState: 0,
              partitionEpoch: 0,
            },
          ],
        },
      ],
    });
    return r.errorCode !== E.NONE ? r.errorCode : r.topics[0].partitions[0].errorCode;
  }

  it('refuses a broker epoch other than the registration, -1 included, STALE_BROKER_EPOCH', async () => {
    // Kafka's ZooKeeper-mode controller (KafkaController.tryProcessAlterPartition) takes only the live broker's
    // epoch: -1 is not a wildcard there, unlike ControlledShutdown's UNKNOWN_BROKER_EPOCH.
    const known = { name: TOPIC, id: topicId };
    for (const version of [0, 3]) {
      assert.equal(await alter(version, known, [0], -1n), E.STALE_BROKER_EPOCH, `v${version} with -1`);
      assert.equal(
        await alter(version, known, [0], brokerEpoch() - 1n),
        E.STALE_BROKER_EPOCH,
        `v${version} older`,
      );
      assert.equal(await alter(version, known, [0]), E.NONE, `v${version} with the registration's epoch`);
    }
  });

  it('answers a replica that cannot join OPERATION_NOT_ATTEMPTED before v2, INELIGIBLE_REPLICA from v2', async () => {
    // Broker 5 is neither alive nor a replica of the partition.
    const known = { name: TOPIC, id: topicId };
    assert.equal(await alter(0, known, [0, 5]), E.OPERATION_NOT_ATTEMPTED);
    assert.equal(await alter(1, known, [0, 5]), E.OPERATION_NOT_ATTEMPTED);
    assert.equal(await alter(2, known, [0, 5]), E.INELIGIBLE_REPLICA);
    assert.equal(await alter(3, known, [0, 5]), E.INELIGIBLE_REPLICA);
    // The same request with a valid ISR (the current one) is answered, by name and by id.
    assert.equal(await alter(1, known, [0]), E.NONE);
    assert.equal(await alter(3, known, [0]), E.NONE);
  });

  it('answers an unknown topic UNKNOWN_TOPIC_OR_PARTITION by name (v0-v1), UNKNOWN_TOPIC_ID by id (v2+)', async () => {
    const unknown = { name: 'no-such-topic', id: UNKNOWN_ID };
    assert.equal(await alter(1, unknown, [0]), E.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(await alter(2, unknown, [0]), E.UNKNOWN_TOPIC_ID);
    assert.equal(await alter(3, unknown, [0]), E.UNKNOWN_TOPIC_ID);
  });
});
