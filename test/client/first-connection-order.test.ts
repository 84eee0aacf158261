// Requests to a broker the client has no connection to yet leave in the order they were issued. The producer
// sends a partition's batches in separate requests, one after another, to its leader; when the first of them
// opens the connection, a later one must not overtake it while the connection is being made. Reordered, an
// idempotent producer's first batch reaches the broker after its second: the broker takes sequence 1 first and
// refuses sequence 0 as out of order for ever, so the record waits for its delivery timeout (seen on a fresh
// cluster with acks=all sends in flight at once); without idempotence the log loses the send order.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Producer } from '../../src/client/producer.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic } from '../helpers/wire-client.js';

const suite = useBrokerWithClient();

test('batches of a partition sent on a connection being opened keep their order in the log', async () => {
  for (let round = 0; round < 3; round++) {
    const topic = `first-connection-${round}`;
    await createTopic(suite.client, topic, { numPartitions: 1 });
    // Without idempotence no InitProducerId opens the leader's connection first: the Produce requests do. The
    // first record fills a batch alone and leaves at once; the others, sent with it, wait in a second batch
    // (their partition has a closed batch queued), which the next round of the same drain sends.
    const producer = new Producer({ bootstrapServers: suite.broker.bootstrap, acks: 1, idempotent: false });
    try {
      const value = Buffer.alloc(20_000, 1);
      const acked = await Promise.all(
        Array.from({ length: 5 }, () => producer.send({ topic, partition: 0, value })),
      );
      assert.deepEqual(
        acked.map((m) => m.offset),
        [0, 1, 2, 3, 4],
        'offsets follow the send order',
      );
    } finally {
      await producer.close();
    }
  }
});
