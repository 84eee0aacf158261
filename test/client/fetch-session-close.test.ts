// The consumer's fetch sessions at close() and after odd answers, against an in-process broker whose interceptor
// sees the consumer's Fetch requests. As Kafka's consumer (AbstractFetch.prepareCloseFetchSessionRequests),
// close() sends each broker it holds a session with a Fetch of that session with epoch -1 (FINAL_EPOCH), which
// frees the session's slot in the broker's cache at once instead of when it is evicted.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerServices } from '../../src/broker/broker-services.js';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { FetchRequest } from '../../src/protocol/messages/01-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

/** Reads records until `count` have come or 15 s pass; answers their values. */
async function consume(consumer: Consumer, count: number): Promise<string[]> {
  const values: string[] = [];
  const deadline = Date.now() + 15_000;
  while (values.length < count && Date.now() < deadline) {
    for (const r of await consumer.poll(100)) values.push(String(r.value));
  }
  return values;
}

describe('consumer fetch sessions', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let producer: Producer;
  const fetches: FetchRequest[] = [];

  const sessionCache = (): BrokerServices['fetchSessions'] =>
    (broker.broker as unknown as { services: BrokerServices }).services.fetchSessions;

  before(async () => {
    broker = await startInProcessBroker({ 'auto.create.topics.enable': false });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    producer = new Producer({ bootstrapServers, lingerMs: 0, allowAutoCreateTopics: false });
    broker.interception.set((request) => {
      if (request.apiKey !== ApiKey.FETCH) return undefined;
      const body = request.body as FetchRequest;
      if (body.replicaId < 0 && body.replicaState.replicaId < 0) fetches.push(structuredClone(body));
      return undefined;
    });
  });

  after(async () => {
    await producer?.close();
    await admin?.close();
    await broker?.stop();
  });

  it('close() closes the session with a Fetch of epoch -1, freeing its slot in the broker', async () => {
    const topic = 'session-close';
    await admin.createTopics([{ topic, numPartitions: 2, replicationFactor: 1 }]);
    for (let i = 0; i < 4; i++) await producer.send({ topic, partition: i % 2, value: Buffer.from(`v${i}`) });
    const before = sessionCache().size;
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest' });
    consumer.assign([
      { topic, partition: 0 },
      { topic, partition: 1 },
    ]);
    assert.equal((await consume(consumer, 4)).length, 4);
    // A second round so that the session is in use (incremental fetches under its id).
    await consumer.poll(200);
    const sessionId = [...fetches].reverse().find((f) => f.sessionId !== 0)?.sessionId;
    assert.ok(sessionId !== undefined, 'the consumer opened a session');
    assert.equal(sessionCache().size, before + 1);
    await consumer.close();
    const last = fetches.at(-1)!;
    assert.deepEqual(
      { sessionId: last.sessionId, sessionEpoch: last.sessionEpoch, topics: last.topics.length },
      { sessionId, sessionEpoch: -1, topics: 0 },
      'the last Fetch closes the session',
    );
    assert.equal(sessionCache().size, before, 'the broker no longer holds the session');
  });
});
