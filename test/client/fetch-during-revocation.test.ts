// Partitions being revoked are not fetched while the commit before the revocation and onPartitionsRevoked run, as
// in Kafka, where they are marked pending revocation first (SubscriptionState.markPendingRevocation: not fetchable;
// ConsumerCoordinator.maybeMarkPartitionsPendingRevocation, the KIP-848 membership manager's
// markPendingRevocationToPauseFetching). A fetch of them then would read bytes whose records no poll() returns.
// A member owns two topics and has read one to its end, so it keeps fetching it (fetch.max.wait.ms 100); a new
// subscription without that topic revokes it, and its onPartitionsRevoked waits while the other topic's fetches go
// on. Both group protocols, against an in-process broker whose interceptor reads the Fetch requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

/** The topic the new subscription drops. */
const REVOKED_TOPIC = 'fetch-during-revocation';
/** The topic the member keeps, fetched while the revocation runs. */
const KEPT_TOPIC = 'fetch-during-revocation-kept';
const RECORDS = 5;

describe('fetching while partitions are revoked', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  /** Set while onPartitionsRevoked runs; the Fetch requests meanwhile, naming each topic. */
  let inCallback = false;
  const fetchesInCallback = { revoked: 0, kept: 0 };

  before(async () => {
    broker = await startInProcessBroker({
      'offsets.topic.num.partitions': 1,
      'group.coordinator.rebalance.protocols': 'classic,consumer',
    });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    const created = await admin.createTopics([
      { topic: REVOKED_TOPIC, numPartitions: 1, replicationFactor: 1 },
      { topic: KEPT_TOPIC, numPartitions: 1, replicationFactor: 1 },
    ]);
    // The consumer's Fetch names topics by id (v13+), by name before.
    const idOf = (topic: string) => created.find((c) => c.topic === topic)!.topicId;
    const names = (t: { topic: string; topicId: string }, topic: string) =>
      t.topic === topic || t.topicId === idOf(topic);
    const producer = new Producer({ bootstrapServers });
    for (let i = 0; i < RECORDS; i++)
      await producer.send({ topic: REVOKED_TOPIC, partition: 0, value: Buffer.from(`v${i}`) });
    await producer.close();
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.FETCH || !inCallback) return undefined;
      const topics = (request.body as FetchRequest).topics;
      if (topics.some((t) => names(t, REVOKED_TOPIC))) fetchesInCallback.revoked++;
      if (topics.some((t) => names(t, KEPT_TOPIC))) fetchesInCallback.kept++;
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await admin?.close();
    await broker?.stop();
  });

  for (const groupProtocol of ['classic', 'consumer'] as const) {
    for (const enableAutoCommit of [false, true]) {
      const name = `${groupProtocol} protocol${enableAutoCommit ? ', auto-commit' : ''}`;
      it(`${name}: no Fetch of a partition while onPartitionsRevoked runs for it`, async () => {
        const consumer = new Consumer({
          bootstrapServers,
          groupId: `fetch-during-revocation-${groupProtocol}-${enableAutoCommit}`,
          groupProtocol,
          enableAutoCommit,
          autoOffsetReset: 'earliest',
          fetchMaxWaitMs: 100,
          // Full Fetch requests name every partition fetched (an incremental one only those that changed).
          fetchSessions: false,
          partitionAssignmentStrategy: ['cooperative-sticky'],
        });
        fetchesInCallback.revoked = 0;
        fetchesInCallback.kept = 0;
        let revoked: string[] = [];
        try {
          consumer.subscribe([KEPT_TOPIC, REVOKED_TOPIC]);
          const deadline = Date.now() + 15_000;
          let read = 0;
          while (read < RECORDS && Date.now() < deadline) read += (await consumer.poll(100)).length;
          assert.equal(read, RECORDS);
          // Read to its end: the consumer fetches the partition again at each fetch.max.wait.ms.
          await consumer.poll(300);
          consumer.subscribe([KEPT_TOPIC], {
            onPartitionsRevoked: async (tps) => {
              if (!tps.some((p) => p.topic === REVOKED_TOPIC)) return;
              revoked = tps.map((p) => p.topic);
              // A Fetch the consumer sent just before the revocation started may reach the broker now.
              await sleep(50);
              inCallback = true;
              await sleep(600);
              inCallback = false;
            },
          });
          while (consumer.assignment().some((p) => p.topic === REVOKED_TOPIC) && Date.now() < deadline)
            await consumer.poll(100);
          assert.deepEqual(revoked, [REVOKED_TOPIC]);
          assert.ok(fetchesInCallback.kept > 0, 'the kept partition is fetched meanwhile');
          assert.equal(
            fetchesInCallback.revoked,
            0,
            `no Fetch of the partition while it is being revoked (${fetchesInCallback.kept} of the kept one)`,
          );
        } finally {
          inCallback = false;
          await consumer.close();
        }
      });
    }
  }
});
