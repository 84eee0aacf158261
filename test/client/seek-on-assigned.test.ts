// A seek made in onPartitionsAssigned decides where the partition is read from, as in Kafka, where newly assigned
// partitions are not fetchable until the callback has completed (SubscriptionState.markPendingOnAssignedCallback):
// the first records poll() returns start at the seek, never at the committed offset, also when the callback first
// asks for the position (which resolves it from the committed offset) and waits a while before seeking; and no Fetch
// for the partition goes out while the callback runs. Both group protocols, against an in-process broker whose
// interceptor reads the Fetch requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

const TOPIC = 'seek-on-assigned';
const tp = { topic: TOPIC, partition: 0 };
const SEEK_TO = 6;
/** A topic the consumer owns and fetches from before the one above is added to its subscription. */
const OWNED_TOPIC = 'seek-on-assigned-owned';

describe('seek in onPartitionsAssigned', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  /** Set while an onPartitionsAssigned callback runs; the Fetch requests naming the topic meanwhile. */
  let inCallback = false;
  let fetchesInCallback = 0;

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    const [created] = await admin.createTopics([
      { topic: TOPIC, numPartitions: 1, replicationFactor: 1 },
      { topic: OWNED_TOPIC, numPartitions: 1, replicationFactor: 1 },
    ]);
    // The consumer's Fetch names the topic by id (v13+).
    const topicId = created!.topicId;
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < 10; i++)
      await producer.send({ topic: TOPIC, partition: 0, value: Buffer.from(`v${i}`) });
    await producer.close();
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.FETCH || !inCallback) return undefined;
      if ((request.body as FetchRequest).topics.some((t) => t.topic === TOPIC || t.topicId === topicId))
        fetchesInCallback++;
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  for (const groupProtocol of ['classic', 'consumer'] as const) {
    it(`${groupProtocol} protocol, a partition added to owned ones: not fetched until the callback ends`, async () => {
      const groupId = `seek-on-assigned-added-${groupProtocol}`;
      await admin.alterConsumerGroupOffsets(groupId, [{ ...tp, offset: 0 }]);
      const consumer = new Consumer({
        bootstrapServers,
        groupId,
        groupProtocol,
        enableAutoCommit: false,
        autoOffsetReset: 'earliest',
        fetchMaxWaitMs: 100,
        partitionAssignmentStrategy: ['cooperative-sticky'],
      });
      fetchesInCallback = 0;
      try {
        consumer.subscribe([OWNED_TOPIC]);
        const deadline = Date.now() + 10_000;
        while (consumer.assignment().length === 0 && Date.now() < deadline) await consumer.poll(100);
        consumer.subscribe([OWNED_TOPIC, TOPIC], {
          onPartitionsAssigned: async (tps) => {
            if (!tps.some((p) => p.topic === TOPIC)) return;
            inCallback = true;
            assert.equal(await consumer.position(tp), 0);
            // The owned partition's fetches come back meanwhile (fetch.max.wait.ms 100): the added one must not
            // join them before the callback has ended.
            await sleep(500);
            consumer.seek(tp, SEEK_TO);
            inCallback = false;
          },
        });
        let first: number | undefined;
        while (first === undefined && Date.now() < deadline)
          first = (await consumer.poll(100)).find((r) => r.topic === TOPIC)?.offset;
        assert.equal(first, SEEK_TO);
        assert.equal(fetchesInCallback, 0, 'no Fetch of the partition while onPartitionsAssigned runs');
      } finally {
        inCallback = false;
        await consumer.close();
      }
    });

    for (const askPosition of [false, true]) {
      const name = `${groupProtocol} protocol${askPosition ? ', position() asked first' : ''}`;
      it(`${name}: the first records polled start at the seek`, async () => {
        const groupId = `seek-on-assigned-${groupProtocol}-${askPosition}`;
        await admin.alterConsumerGroupOffsets(groupId, [{ ...tp, offset: 0 }]);
        const consumer = new Consumer({ bootstrapServers, groupId, groupProtocol, enableAutoCommit: false });
        fetchesInCallback = 0;
        try {
          consumer.subscribe([TOPIC], {
            onPartitionsAssigned: async (tps) => {
              if (tps.length === 0) return;
              inCallback = true;
              if (askPosition) assert.equal(await consumer.position(tp), 0);
              // Time for a fetch from the committed offset to come back, were one sent.
              await sleep(300);
              consumer.seek(tp, SEEK_TO);
              inCallback = false;
            },
          });
          const deadline = Date.now() + 10_000;
          let first: number | undefined;
          while (first === undefined && Date.now() < deadline) first = (await consumer.poll(100))[0]?.offset;
          assert.equal(first, SEEK_TO);
          assert.equal(fetchesInCallback, 0, 'no Fetch of the partition while onPartitionsAssigned runs');
        } finally {
          inCallback = false;
          await consumer.close();
        }
      });
    }
  }
});
