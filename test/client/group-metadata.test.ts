// What a classic-protocol consumer's groupMetadata() answers around a rebalance, as KafkaConsumer.groupMetadata():
// Kafka's ConsumerCoordinator changes it in onJoinComplete only, when the poll applies a new generation's
// assignment. So it never names a generation whose assignment the consumer does not have yet (the JoinGroup was
// answered, the SyncGroup not), and a member the group dropped keeps its last generation and member id, with which
// a transactional offset commit is fenced (KIP-447); so does a member that unsubscribed. Against a broker whose
// request interceptor holds the SyncGroup or Heartbeat requests the test chooses (test/helpers/in-process-broker.ts).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { HeartbeatRequest } from '../../src/protocol/messages/12-heartbeat.js';
import type {
  ConsumerGroupHeartbeatRequest,
  ConsumerGroupHeartbeatResponse,
} from '../../src/protocol/messages/68-consumer-group-heartbeat.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { waitFor } from '../helpers/cluster.js';
import { type InProcessBroker, onKey, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'group-metadata';

/** Polls until `done` holds; fails after 30 s. */
async function pollUntil(consumer: Consumer, what: string, done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 30_000; !done(); ) {
    assert.ok(Date.now() < deadline, `timed out polling for ${what}`);
    await consumer.poll(100);
  }
}

describe('a consumer group member’s groupMetadata()', () => {
  let broker: InProcessBroker;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'transaction.state.log.num.partitions': 1,
      'transaction.state.log.replication.factor': 1,
      'transaction.state.log.min.isr': 1,
      // A session short enough that the coordinator drops a member without heartbeats within the test.
      'group.min.session.timeout.ms': 1000,
      // The KIP-848 protocol too, for the consumer-protocol test.
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(wire, TOPIC, { numPartitions: 2, replicationFactor: 1 });
    } finally {
      wire.close();
    }
  });
  after(() => broker?.stop());

  /** The number of members of the group as its coordinator describes it. */
  async function membersOf(groupId: string): Promise<number> {
    const wire = await WireClient.connect(broker.host, broker.port);
    try {
      const r = await wire.call(ApiKey.DESCRIBE_GROUPS, 5, {
        groups: [groupId],
        includeAuthorizedOperations: false,
      });
      return r.groups[0].members.length;
    } finally {
      wire.close();
    }
  }

  it('names the new generation only once the poll applied its assignment', async () => {
    let holding = false;
    let held = 0;
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    broker.interception.set(
      onKey(ApiKey.SYNC_GROUP, async (request) => {
        if (!holding) return request.handle();
        held++;
        await released;
        return request.handle();
      }),
    );
    const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${broker.port}`, groupId: 'metadata-sync' });
    try {
      consumer.subscribe([TOPIC]);
      await pollUntil(consumer, 'both partitions', () => consumer.assignment().length === 2);
      const stable = consumer.groupMetadata();
      assert.ok(stable.generationId >= 0 && stable.memberId !== '', 'the member is in a generation');

      holding = true;
      consumer.enforceRebalance();
      // The JoinGroup is answered (the new generation's id is known) and the SyncGroup waits at the broker.
      await pollUntil(consumer, 'the SyncGroup held', () => held > 0);
      assert.equal(consumer.assignment().length, 0, 'the eager member gave its partitions up before joining');
      assert.deepEqual(consumer.groupMetadata(), stable, 'the generation whose assignment it has');

      release();
      await pollUntil(
        consumer,
        'a new generation',
        () => consumer.groupMetadata().generationId > stable.generationId,
      );
      assert.equal(consumer.assignment().length, 2, 'with the new generation, its assignment');
    } finally {
      release();
      broker.interception.clear();
      await consumer.close();
    }
  });

  it('keeps its last generation when the group drops the member, so that a transactional commit with it is fenced', async () => {
    const groupId = 'metadata-dropped';
    let heartbeatsHeld = false;
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let unknownMemberAnswered = false;
    let heartbeatAfterFence = false;
    broker.interception.set(
      onKey<HeartbeatRequest>(ApiKey.HEARTBEAT, async (request) => {
        if (request.body.groupId !== groupId) return request.handle();
        // The client's heartbeat after it handled UNKNOWN_MEMBER_ID names no member any more.
        if (unknownMemberAnswered && request.body.memberId === '') heartbeatAfterFence = true;
        if (heartbeatsHeld) await released;
        const response = await request.handle();
        if ((response as { errorCode: number }).errorCode === ErrorCode.UNKNOWN_MEMBER_ID)
          unknownMemberAnswered = true;
        return response;
      }),
    );
    const consumer = new Consumer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      groupId,
      sessionTimeoutMs: 1500,
      heartbeatIntervalMs: 300,
    });
    const producer = new Producer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      transactionalId: 'metadata-dropped-txn',
    });
    try {
      consumer.subscribe([TOPIC]);
      await pollUntil(consumer, 'both partitions', () => consumer.assignment().length === 2);
      const last = consumer.groupMetadata();
      assert.ok(last.generationId >= 0 && last.memberId !== '', 'the member is in a generation');

      // No heartbeat reaches the coordinator for longer than the session: it removes the member.
      heartbeatsHeld = true;
      await waitFor('the coordinator to remove the member', async () =>
        (await membersOf(groupId)) === 0 ? true : undefined,
      );
      release();
      await waitFor('the member told it is unknown, and handling it', async () =>
        heartbeatAfterFence ? true : undefined,
      );
      assert.deepEqual(consumer.groupMetadata(), last, 'the generation of the assignment it still has');

      await producer.initTransactions();
      producer.beginTransaction();
      await assert.rejects(
        producer.sendOffsetsToTransaction(
          [{ topic: TOPIC, partition: 0, offset: 1 }],
          consumer.groupMetadata(),
        ),
        (e: Error) =>
          e instanceof KafkaProtocolError &&
          (e.code === ErrorCode.UNKNOWN_MEMBER_ID || e.code === ErrorCode.ILLEGAL_GENERATION),
        'the coordinator refuses the dropped member’s commit',
      );
    } finally {
      release();
      broker.interception.clear();
      await producer.close();
      await consumer.close();
    }
  });

  it('keeps its last generation after unsubscribe(), so that a transactional commit with it is fenced', async () => {
    const groupId = 'metadata-unsubscribed';
    const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${broker.port}`, groupId });
    const producer = new Producer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      transactionalId: 'metadata-unsubscribed-txn',
    });
    try {
      consumer.subscribe([TOPIC]);
      await pollUntil(consumer, 'both partitions', () => consumer.assignment().length === 2);
      const last = consumer.groupMetadata();
      assert.ok(last.generationId >= 0 && last.memberId !== '', 'the member is in a generation');

      await consumer.unsubscribe();
      assert.equal(await membersOf(groupId), 0, 'the member left the group');
      assert.deepEqual(consumer.groupMetadata(), last, 'Kafka resets the generation, not groupMetadata');

      await producer.initTransactions();
      producer.beginTransaction();
      await assert.rejects(
        producer.sendOffsetsToTransaction(
          [{ topic: TOPIC, partition: 0, offset: 1 }],
          consumer.groupMetadata(),
        ),
        (e: Error) => e instanceof KafkaProtocolError && e.code === ErrorCode.UNKNOWN_MEMBER_ID,
        'the coordinator refuses the commit of a member that left',
      );
      await producer.abortTransaction();

      // A new subscription names the last generation until its own first assignment is applied.
      consumer.subscribe([TOPIC]);
      assert.deepEqual(consumer.groupMetadata(), last);
      await pollUntil(consumer, 'both partitions again', () => consumer.assignment().length === 2);
      const rejoined = consumer.groupMetadata();
      assert.ok(rejoined.generationId > last.generationId, 'the new generation');
      assert.notEqual(rejoined.memberId, last.memberId, 'a new member id');
    } finally {
      await producer.close();
      await consumer.close();
    }
  });
  it('KIP-848: keeps the last member epoch and id when the member is fenced, as Kafka’s new consumer', async () => {
    const groupId = 'metadata-848-fenced';
    let fenceNext = false;
    let fenced = false;
    let rejoinSeen = false;
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    broker.interception.set(
      onKey<ConsumerGroupHeartbeatRequest>(ApiKey.CONSUMER_GROUP_HEARTBEAT, async (request) => {
        if (request.body.groupId !== groupId) return request.handle();
        if (fenceNext) {
          // The coordinator's answer to a member it fenced (a stale epoch), whatever it would have said.
          fenceNext = false;
          fenced = true;
          const answer = (await request.handle()) as ConsumerGroupHeartbeatResponse;
          return { ...answer, errorCode: ErrorCode.FENCED_MEMBER_EPOCH, errorMessage: 'fenced by the test' };
        }
        if (fenced && request.body.memberEpoch === 0) {
          // The member rejoining after the fencing: held until the test has read groupMetadata().
          rejoinSeen = true;
          await released;
        }
        return request.handle();
      }),
    );
    const consumer = new Consumer({
      bootstrapServers: `127.0.0.1:${broker.port}`,
      groupId,
      groupProtocol: 'consumer',
    });
    try {
      consumer.subscribe([TOPIC]);
      await pollUntil(consumer, 'both partitions', () => consumer.assignment().length === 2);
      const last = consumer.groupMetadata();
      assert.ok(last.generationId > 0 && last.memberId !== '', 'the member has an epoch');

      fenceNext = true;
      // Heartbeats run on the member's own timer; a poll here would wait for the held one.
      await waitFor('the fenced member to rejoin', async () => (rejoinSeen ? true : undefined));
      assert.deepEqual(consumer.groupMetadata(), last, 'the last epoch and member id, not 0 and ""');
      release();
      // Rejoined as a new member (the old one, which the test only told it was fenced, keeps its partitions
      // until its session ends): groupMetadata() names the new member once it has an epoch.
      await pollUntil(consumer, 'the new member', () => consumer.groupMetadata().memberId !== last.memberId);
      assert.ok(consumer.groupMetadata().generationId > 0, 'the new member has an epoch');
    } finally {
      release();
      broker.interception.clear();
      await consumer.close();
    }
  });
});
