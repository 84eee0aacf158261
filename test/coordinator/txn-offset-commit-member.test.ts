// TxnOffsetCommit v3 (KIP-447) over the wire: the member, generation and group instance id it names are checked
// as Kafka 3.5+'s group coordinator checks a transactional commit (validateOffsetCommit). With generation -1 an
// Empty group takes the commit; otherwise a commit naming any of the three must come from the current member of the
// current generation. Before, generation -1 skipped the generation check, an empty member id skipped the member
// check and an instance id no member holds passed: a zombie whose heartbeat was answered ILLEGAL_GENERATION
// (librdkafka then sends its member id with generation -1) could commit offsets of partitions that a rebalance was
// handing to another member, and both would process them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const E = ErrorCode;
const TOPIC = 'txn-member-input';
const GROUP = 'txn-member-group';
const EMPTY_GROUP = 'txn-member-empty-group';
const TID = 'txn-member-producer';

describe('TxnOffsetCommit checks the member and generation it names, as Kafka', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  const brokers = () => [broker];
  let producerId: bigint;
  let producerEpoch: number;
  let memberId: string;
  let generationId: number;

  before(async () => {
    broker = await startBroker({
      overrides: {
        'offsets.topic.num.partitions': 1,
        'group.initial.rebalance.delay.ms': 0,
        'transaction.state.log.num.partitions': 1,
        'transaction.state.log.replication.factor': 1,
        'transaction.state.log.min.isr': 1,
      },
    });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, { numPartitions: 1, replicationFactor: 1 });

    // One dynamic member in a Stable group.
    const join = (id: string) =>
      callCoordinator(
        brokers,
        0,
        GROUP,
        ApiKey.JOIN_GROUP,
        7,
        {
          groupId: GROUP,
          sessionTimeoutMs: 30_000,
          rebalanceTimeoutMs: 30_000,
          memberId: id,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]) }],
          reason: null,
        },
        (r) => r.errorCode,
      );
    const first = await join('');
    assert.equal(first.errorCode, E.MEMBER_ID_REQUIRED);
    const joined = await join(first.memberId);
    assert.equal(joined.errorCode, E.NONE);
    memberId = joined.memberId;
    generationId = joined.generationId;
    const synced = await client.call(ApiKey.SYNC_GROUP, 5, {
      groupId: GROUP,
      generationId,
      memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId, assignment: Buffer.alloc(0) }],
    });
    assert.equal(synced.errorCode, E.NONE);

    // A transaction that has both groups' offsets partition (one __consumer_offsets partition here).
    const init = await callCoordinator(
      brokers,
      1,
      TID,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: TID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, E.NONE);
    producerId = init.producerId;
    producerEpoch = init.producerEpoch;
    for (const groupId of [GROUP, EMPTY_GROUP]) {
      const added = await callCoordinator(
        brokers,
        1,
        TID,
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        { transactionalId: TID, producerId, producerEpoch, groupId },
        (r) => r.errorCode,
      );
      assert.equal(added.errorCode, E.NONE);
    }
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  /** The error of a TxnOffsetCommit v3 of one offset, naming `member`. */
  async function commit(
    groupId: string,
    member: { memberId: string; generationId: number; groupInstanceId: string | null },
  ): Promise<number> {
    const r = await callCoordinator(
      brokers,
      0,
      groupId,
      ApiKey.TXN_OFFSET_COMMIT,
      3,
      {
        transactionalId: TID,
        groupId,
        producerId,
        producerEpoch,
        ...member,
        topics: [
          {
            name: TOPIC,
            partitions: [
              { partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: '' },
            ],
          },
        ],
      },
      (x) => x.topics[0].partitions[0].errorCode,
    );
    return r.topics[0].partitions[0].errorCode;
  }

  it('refuses generation -1, an empty member id and an instance id no member holds in a group with members', async () => {
    assert.equal(await commit(GROUP, { memberId, generationId, groupInstanceId: null }), E.NONE);
    assert.equal(
      await commit(GROUP, { memberId, generationId: -1, groupInstanceId: null }),
      E.ILLEGAL_GENERATION,
      'a member id with generation -1 (librdkafka after ILLEGAL_GENERATION)',
    );
    assert.equal(
      await commit(GROUP, { memberId: '', generationId, groupInstanceId: null }),
      E.UNKNOWN_MEMBER_ID,
      'a generation without a member id',
    );
    assert.equal(
      await commit(GROUP, { memberId, generationId, groupInstanceId: 'no-such-instance' }),
      E.UNKNOWN_MEMBER_ID,
      'an instance id no member holds',
    );
    assert.equal(
      await commit(GROUP, { memberId, generationId: generationId + 1, groupInstanceId: null }),
      E.ILLEGAL_GENERATION,
    );
    // A producer from before KIP-447 names none of them: not checked.
    assert.equal(await commit(GROUP, { memberId: '', generationId: -1, groupInstanceId: null }), E.NONE);
  });

  it('lets an Empty group take a commit with generation -1, whatever member id it names', async () => {
    assert.equal(
      await commit(EMPTY_GROUP, { memberId: 'gone-member', generationId: -1, groupInstanceId: null }),
      E.NONE,
    );
    assert.equal(
      await commit(EMPTY_GROUP, { memberId: 'gone-member', generationId: 3, groupInstanceId: null }),
      E.UNKNOWN_MEMBER_ID,
    );
  });
});
