// A seek made in onPartitionsAssigned decides where the partition is read from, as in Kafka, where newly assigned
// partitions are not fetchable until the callback has completed (SubscriptionState.markPendingOnAssignedCallback):
// the first records poll() returns start at the seek, never at the committed offset, also when the callback first
// asks for the position (which resolves it from the committed offset) and waits a while before seeking. Both group
// protocols, against an in-process broker.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'seek-on-assigned';
const tp = { topic: TOPIC, partition: 0 };
const SEEK_TO = 6;

describe('seek in onPartitionsAssigned', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < 10; i++)
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from(`v${i}`) });
    await producer.close();
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  for (const groupProtocol of ['classic', 'consumer'] as const) {
    for (const askPosition of [false, true]) {
      const name = `${groupProtocol} protocol${askPosition ? ', position() asked first' : ''}`;
      it(`${name}: the first records polled start at the seek`, async () => {
        const groupId = `seek-on-assigned-${groupProtocol}-${askPosition}`;
        await admin.alterConsumerGroupOffsets(groupId, [{ ...tp, offset: 0 }]);
        const consumer = new Consumer({ bootstrapServers, groupId, groupProtocol, enableAutoCommit: false });
        try {
          consumer.subscribe([TOPIC], {
            onPartitionsAssigned: async (tps) => {
              if (tps.length === 0) return;
              if (askPosition) assert.equal(await consumer.position(tp), 0);
              // Time for a fetch from the committed offset to come back, were one sent.
              await sleep(300);
              consumer.seek(tp, SEEK_TO);
            },
          });
          const deadline = Date.now() + 10_000;
          let first: number | undefined;
          while (first === undefined && Date.now() < deadline) first = (await consumer.poll(100))[0]?.offset;
          assert.equal(first, SEEK_TO);
        } finally {
          await consumer.close();
        }
      });
    }
  }
});
