// A consumer that does not poll within max.poll.interval.ms, as Kafka's heartbeat thread takes it
// (AbstractCoordinator.HeartbeatThread, then maybeLeaveGroup): a dynamic member sends LeaveGroup, so its partitions
// move at once; a static member (group.instance.id) sends none and stays in the group until its session times out,
// so the poll that comes late rejoins under the same instance id without the group losing it in between. Both
// members lose their generation (a commit then fails) and rejoin at the next poll. Against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'poll-timeout';
const MAX_POLL_INTERVAL_MS = 1000;
const HEARTBEAT_INTERVAL_MS = 100;
const SESSION_TIMEOUT_MS = 20_000;

describe('max.poll.interval.ms expiry', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.initial.rebalance.delay.ms': 0,
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  function consumer(groupId: string, groupInstanceId?: string): Consumer {
    return new Consumer({
      bootstrapServers,
      groupId,
      groupInstanceId,
      enableAutoCommit: false,
      maxPollIntervalMs: MAX_POLL_INTERVAL_MS,
      heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
    });
  }

  async function pollUntilAssigned(c: Consumer): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (c.assignment().length === 0 && Date.now() < deadline) await c.poll(100);
    assert.equal(c.assignment().length, 1, 'the consumer was given the partition');
  }

  async function members(groupId: string): Promise<(string | null)[]> {
    const [group] = await admin.describeGroups([groupId]);
    return group!.members.map((m) => m.groupInstanceId);
  }

  it('a static member stays in the group past the poll timeout and rejoins at the next poll', async () => {
    const c = consumer('poll-timeout-static', 'instance-1');
    try {
      c.subscribe([TOPIC]);
      await pollUntilAssigned(c);
      assert.deepEqual(await members('poll-timeout-static'), ['instance-1']);
      // No poll for longer than max.poll.interval.ms: the heartbeat timer notices and the member drops its generation.
      await sleep(MAX_POLL_INTERVAL_MS + 10 * HEARTBEAT_INTERVAL_MS);
      assert.deepEqual(
        await members('poll-timeout-static'),
        ['instance-1'],
        'the static member is still in the group (no LeaveGroup was sent)',
      );
      await assert.rejects(
        c.commit([{ topic: TOPIC, partition: 0, offset: 0 }]),
        (err: unknown) => err instanceof KafkaProtocolError && err.code === ErrorCode.ILLEGAL_GENERATION,
        'a commit after the poll timeout fails (Kafka: CommitFailedException)',
      );
      await pollUntilAssigned(c);
      assert.deepEqual(await members('poll-timeout-static'), ['instance-1']);
    } finally {
      await c.close();
    }
  });

  it('a dynamic member leaves the group at the poll timeout', async () => {
    const c = consumer('poll-timeout-dynamic');
    const events: string[] = [];
    try {
      c.subscribe([TOPIC], {
        onPartitionsRevoked: (tps) => {
          events.push(`revoked ${tps.length}`);
        },
        onPartitionsLost: (tps) => {
          events.push(`lost ${tps.length}`);
        },
      });
      await pollUntilAssigned(c);
      assert.equal((await members('poll-timeout-dynamic')).length, 1);
      await sleep(MAX_POLL_INTERVAL_MS + 10 * HEARTBEAT_INTERVAL_MS);
      assert.deepEqual(await members('poll-timeout-dynamic'), [], 'LeaveGroup removed the member');
    } finally {
      await c.close();
    }
    // Kafka's onLeavePrepare: without a generation the partitions are lost, not revoked (no commit is possible).
    assert.deepEqual(events, ['lost 1']);
  });
});
