// consumer_byte_rate and fetch sessions through a broker process with one fetch session slot: a full fetch that is
// throttled gets an empty answer without a session, and, as in Kafka (whose FullFetchContext makes the session
// only when it answers with data), leaves no session behind to hold the slot.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import {
  consumerFetchBody,
  createTopic,
  fetchPartition,
  produceBatch,
  WireClient,
} from '../helpers/wire-client.js';

const TOPIC = 'session-quota-topic';

/** A full fetch that asks for a new session (epoch 0). */
function newSessionFetch() {
  return consumerFetchBody([{ topic: TOPIC, partitions: [fetchPartition(0, 0)] }], { sessionEpoch: 0 });
}

describe('a throttled full fetch and the fetch session cache', () => {
  let broker: BrokerProcess;
  let admin: Admin;

  before(async () => {
    broker = await startBroker({
      overrides: { 'quota.window.num': 2, 'max.incremental.fetch.session.cache.slots': 1 },
    });
    admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'session-quota-admin' });
    const setup = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(setup, TOPIC, { numPartitions: 1, replicationFactor: 1 });
      await produceBatch(setup, TOPIC, buildBatch([{ value: 'x'.repeat(1200) }]));
    } finally {
      setup.close();
    }
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it('leaves no session behind, so the only slot is free for the next consumer', async () => {
    await admin.alterClientQuotas([
      { entity: { clientId: 'throttled-full' }, ops: [{ key: 'consumer_byte_rate', value: 1000 }] },
    ]);
    const throttled = await WireClient.connect(broker.host, broker.port, 'throttled-full');
    const other = await WireClient.connect(broker.host, broker.port, 'free-consumer');
    try {
      // About 1.3 kB of answer on a fresh sensor of 1000 B/s: throttled at once.
      const r = await throttled.call(ApiKey.FETCH, 12, newSessionFetch());
      assert.ok(r.throttleTimeMs > 0, 'the first fetch is over the quota');
      assert.deepEqual(r.responses, []);
      assert.equal(r.sessionId, 0, 'no session for a throttled full fetch');
      const free = await other.call(ApiKey.FETCH, 12, newSessionFetch());
      assert.equal(free.throttleTimeMs, 0);
      assert.notEqual(free.sessionId, 0, 'the only session slot is free for another consumer');
    } finally {
      throttled.close();
      other.close();
    }
  });
});
