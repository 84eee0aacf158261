// A static member (group.instance.id) replaced by another instance with the same id, as Kafka's consumer takes it:
// FENCED_INSTANCE_ID is fatal, not a reason to rejoin quietly (which would take the id back and fence the other
// instance in turn, the two flapping). Classic protocol (AbstractCoordinator): the heartbeat answered
// FENCED_INSTANCE_ID loses the generation and poll() throws it (FencedInstanceIdException from the heartbeat
// thread). KIP-848 protocol (ConsumerHeartbeatRequestManager, AbstractMembershipManager.transitionToFatal): the
// member goes to its fatal state: its partitions are lost, poll() throws the error, and it sends no heartbeat
// afterwards. Against an in-process broker: a second instance fences the first (classic), or the interceptor answers
// the member's heartbeat with the error (KIP-848).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import type { TopicPartition } from '../../src/client/requests.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ConsumerGroupHeartbeatRequest } from '../../src/protocol/messages/68-consumer-group-heartbeat.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'fenced-instance-id';

/** Polls until the consumer owns a partition. */
async function pollUntilAssigned(consumer: Consumer, deadline: number): Promise<void> {
  while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
  assert.ok(consumer.assignment().length > 0, 'the consumer was given partitions');
}

/** Polls for up to `ms`; the first error a poll throws, or null. */
async function pollForError(consumer: Consumer, ms: number): Promise<unknown> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      await consumer.poll(100);
    } catch (err) {
      return err;
    }
  }
  return null;
}

describe('FENCED_INSTANCE_ID is fatal for a static member', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
      'group.consumer.min.heartbeat.interval.ms': 100,
      'group.consumer.heartbeat.interval.ms': 200,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  it('classic: poll() throws FENCED_INSTANCE_ID once another instance took the id', async () => {
    const options = {
      bootstrapServers,
      groupId: 'fenced-classic',
      groupInstanceId: 'instance-1',
      heartbeatIntervalMs: 100,
      sessionTimeoutMs: 10_000,
      enableAutoCommit: false,
    };
    const first = new Consumer(options);
    const second = new Consumer(options);
    try {
      first.subscribe([TOPIC]);
      await pollUntilAssigned(first, Date.now() + 10_000);
      second.subscribe([TOPIC]);
      await pollUntilAssigned(second, Date.now() + 10_000);
      const err = await pollForError(first, 3000);
      assert.ok(err instanceof KafkaProtocolError, `poll() threw ${String(err)}`);
      assert.equal(err.code, ErrorCode.FENCED_INSTANCE_ID);
      // The instance that took the id keeps it: the fenced one did not take it back.
      assert.equal(await pollForError(second, 500), null);
      assert.equal(second.assignment().length, 1);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('consumer protocol: the member loses its partitions, poll() throws, and it stops heartbeating', async () => {
    const instanceId = 'instance-848';
    let fence = false;
    let heartbeatsAfterFence = 0;
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.CONSUMER_GROUP_HEARTBEAT) return undefined;
      const body = request.body as ConsumerGroupHeartbeatRequest;
      if (!fence || body.instanceId !== instanceId) return undefined;
      heartbeatsAfterFence++;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.FENCED_INSTANCE_ID,
        errorMessage: null,
        memberId: body.memberId,
        memberEpoch: body.memberEpoch,
        heartbeatIntervalMs: 0,
        assignment: null,
      };
    });
    const lost: TopicPartition[] = [];
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'fenced-848',
      groupInstanceId: instanceId,
      groupProtocol: 'consumer',
      enableAutoCommit: false,
    });
    try {
      consumer.subscribe([TOPIC], { onPartitionsLost: (tps) => void lost.push(...tps) });
      await pollUntilAssigned(consumer, Date.now() + 10_000);
      fence = true;
      const err = await pollForError(consumer, 3000);
      assert.ok(err instanceof KafkaProtocolError, `poll() threw ${String(err)}`);
      assert.equal(err.code, ErrorCode.FENCED_INSTANCE_ID);
      assert.deepEqual(consumer.assignment(), []);
      assert.deepEqual(lost, [{ topic: TOPIC, partition: 0 }]);
      const answered = heartbeatsAfterFence;
      // No rejoin and no heartbeat afterwards, whatever the polls.
      assert.equal(await pollForError(consumer, 1000), null);
      assert.equal(heartbeatsAfterFence, answered, 'no heartbeat after the fatal answer');
      assert.deepEqual(consumer.assignment(), []);
    } finally {
      broker.interception.clear();
      await consumer.close();
    }
  });
});
