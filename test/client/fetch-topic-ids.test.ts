// The consumer's Fetch by topic id (KIP-516), as Kafka's consumer sends it: the newest version the broker speaks
// (v13+, topics named by id) when every topic fetched has an id in the metadata, v12 by name when one has none
// (an older broker's metadata). A topic deleted and created again under the same name while a consumer reads it
// has a new id: the fetch session sends the partition under the new id and forgets it under the old one, and the
// consumer reads the new topic. A fetch answered FETCH_SESSION_TOPIC_ID_ERROR starts the session over and
// refreshes the metadata, without failing poll(). Against an in-process broker whose interceptor reads the Fetch
// requests (their version, ids and session fields) and rewrites what a test needs.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { FetchRequest, FetchResponse } from '../../src/protocol/messages/01-fetch.js';
import type { MetadataResponse } from '../../src/protocol/messages/03-metadata.js';
import { ZERO_UUID } from '../../src/protocol/messages/codec-support.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';

/** A consumer Fetch as the broker received it. */
interface SeenFetch {
  version: number;
  body: FetchRequest;
}

/** Reads records until `count` have come or 15 s pass; answers their values. */
async function consume(consumer: Consumer, count: number, topic: string): Promise<string[]> {
  const values: string[] = [];
  const deadline = Date.now() + 15_000;
  while (values.length < count && Date.now() < deadline) {
    for (const r of await consumer.poll(100)) if (r.topic === topic) values.push(String(r.value));
  }
  return values;
}

describe('consumer Fetch by topic id (v13+)', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let admin: Admin;
  let producer: Producer;
  const fetches: SeenFetch[] = [];
  /** Topics whose id the Metadata responses leave out (ZERO_UUID), as a broker before KIP-516 does. */
  const hiddenIds = new Set<string>();
  /** Consumer Fetch requests to answer with the top-level error `failWith` instead of handling (counted down). */
  let failNextFetches = 0;
  let failWith: number = ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR;
  let metadataRequests = 0;

  before(async () => {
    broker = await startInProcessBroker({ 'auto.create.topics.enable': false });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    admin = new Admin({ bootstrapServers });
    producer = new Producer({ bootstrapServers, lingerMs: 0, allowAutoCreateTopics: false });
    broker.interception.set((request) => {
      if (request.apiKey === ApiKey.METADATA) {
        metadataRequests++;
        return request.handle().then((r) => {
          const res = r as MetadataResponse;
          for (const t of res.topics) if (t.name !== null && hiddenIds.has(t.name)) t.topicId = ZERO_UUID;
          return res;
        });
      }
      if (request.apiKey !== ApiKey.FETCH) return undefined;
      const body = request.body as FetchRequest;
      if (body.replicaId >= 0 || body.replicaState.replicaId >= 0) return undefined;
      fetches.push({ version: request.apiVersion, body: structuredClone(body) });
      if (failNextFetches > 0) {
        failNextFetches--;
        const answer: FetchResponse = {
          throttleTimeMs: 0,
          errorCode: failWith,
          sessionId: 0,
          responses: [],
          nodeEndpoints: [],
        };
        return answer;
      }
      return undefined;
    });
  });
  after(async () => {
    broker?.interception.clear();
    await producer?.close();
    await admin?.close();
    await broker?.stop();
  });

  async function createTopic(topic: string): Promise<string> {
    const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    assert.equal(created!.error, null, `${topic} created`);
    return created!.topicId;
  }

  async function produce(topic: string, values: string[]): Promise<void> {
    for (const v of values) await producer.send({ topic, partition: 0, value: Buffer.from(v) });
  }

  /** The Fetch requests seen from `from` on that name `topicId`, or `topic` by name. */
  function fetchesOf(from: number, topic: string, topicId: string): SeenFetch[] {
    return fetches
      .slice(from)
      .filter((f) =>
        f.body.topics.some((t) => (f.version >= 13 ? t.topicId === topicId : t.topic === topic)),
      );
  }

  it('fetches with the newest version, naming the topic by its id', async () => {
    const topic = 'fetch-by-id';
    const topicId = await createTopic(topic);
    await produce(topic, ['a', 'b', 'c']);
    const from = fetches.length;
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 3, topic), ['a', 'b', 'c']);
      const seen = fetches.slice(from);
      assert.ok(seen.length > 0, 'the consumer fetched');
      // Brook's broker speaks Fetch up to v17.
      assert.deepEqual(new Set(seen.map((f) => f.version)), new Set([17]), 'every Fetch went as v17');
      assert.ok(
        fetchesOf(from, topic, topicId).length > 0,
        'the Fetch named the topic by the id CreateTopics gave it',
      );
    } finally {
      await consumer.close();
    }
  });

  it('fetches a topic without an id in the metadata with v12, by name', async () => {
    const topic = 'fetch-by-name';
    await createTopic(topic);
    hiddenIds.add(topic);
    await produce(topic, ['x', 'y']);
    const from = fetches.length;
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 2, topic), ['x', 'y']);
      const seen = fetches.slice(from);
      assert.deepEqual(new Set(seen.map((f) => f.version)), new Set([12]), 'every Fetch went as v12');
      assert.ok(
        seen.some((f) => f.body.topics.some((t) => t.topic === topic)),
        'the Fetch named the topic',
      );
    } finally {
      await consumer.close();
      hiddenIds.delete(topic);
    }
  });

  it('reads a topic deleted and created again under the same name (a new topic id)', async () => {
    const topic = 'fetch-recreated';
    const oldId = await createTopic(topic);
    await produce(topic, ['old-0', 'old-1', 'old-2']);
    const consumer = new Consumer({
      bootstrapServers,
      autoOffsetReset: 'earliest',
      fetchMaxWaitMs: 100,
      allowAutoCreateTopics: false,
    });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 3, topic), ['old-0', 'old-1', 'old-2']);
      await admin.deleteTopics([topic]);
      // The broker may still be removing the old topic's log: create it again once it lets us.
      let newId = '';
      const deadline = Date.now() + 15_000;
      while (newId === '' && Date.now() < deadline) {
        const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
        if (created!.error === null) newId = created!.topicId;
        else await consumer.poll(100);
      }
      assert.notEqual(newId, '', 'created again');
      assert.notEqual(newId, oldId);
      const from = fetches.length;
      // As in Kafka, the position (3) carries over to the new topic: it is in range there, so only the new id tells
      // the session that the partition changed.
      await produce(topic, ['new-0', 'new-1', 'new-2', 'new-3', 'new-4']);
      assert.deepEqual(await consume(consumer, 2, topic), ['new-3', 'new-4']);
      const replaced = fetchesOf(from, topic, newId).find((f) => f.body.sessionEpoch > 0);
      assert.ok(replaced !== undefined, 'an incremental fetch named the partition under the new id');
      assert.ok(
        replaced.body.forgottenTopicsData.some((t) => t.topicId === oldId && t.partitions.includes(0)),
        'and forgot it under the old id',
      );
    } finally {
      await consumer.close();
    }
  });

  for (const [error, name, closes] of [
    [ErrorCode.INVALID_FETCH_SESSION_EPOCH, 'INVALID_FETCH_SESSION_EPOCH', true],
    [ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 'FETCH_SESSION_ID_NOT_FOUND', false],
  ] as const) {
    it(`${name}: the next fetch ${closes ? 'closes the session and ' : ''}opens a new one`, async () => {
      const topic = `fetch-session-restart-${error}`;
      await createTopic(topic);
      await produce(topic, ['s']);
      const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
      try {
        consumer.assign([{ topic, partition: 0 }]);
        assert.deepEqual(await consume(consumer, 1, topic), ['s']);
        const from = fetches.length;
        failWith = error;
        failNextFetches = 1;
        await produce(topic, ['t']);
        assert.deepEqual(await consume(consumer, 1, topic), ['t']);
        const [failed, next] = fetches.slice(from);
        assert.ok(
          failed!.body.sessionId !== 0 && failed!.body.sessionEpoch > 0,
          'an incremental fetch failed',
        );
        // Kafka's FetchSessionHandler.handleResponse: a session the broker no longer has is not named again;
        // any other error closes it (its id, epoch 0) as the new one opens, so it does not hold a cache slot.
        assert.equal(next!.body.sessionId, closes ? failed!.body.sessionId : 0);
        assert.equal(next!.body.sessionEpoch, 0);
      } finally {
        failNextFetches = 0;
        failWith = ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR;
        await consumer.close();
      }
    });
  }

  it('FETCH_SESSION_TOPIC_ID_ERROR: a new session and a metadata refresh, poll() goes on', async () => {
    const topic = 'fetch-session-topic-id-error';
    await createTopic(topic);
    await produce(topic, ['p', 'q']);
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 2, topic), ['p', 'q']);
      const metadataBefore = metadataRequests;
      const from = fetches.length;
      failNextFetches = 1;
      await produce(topic, ['r']);
      assert.deepEqual(await consume(consumer, 1, topic), ['r']);
      const seen = fetches.slice(from);
      const failed = seen.findIndex((f) => f.body.sessionEpoch > 0);
      assert.equal(failed, 0, 'the fetch answered with the error was incremental');
      // Kafka's nextCloseExistingAttemptNew: the old session's id with epoch 0 closes it as a new one opens.
      assert.equal(seen[1]?.body.sessionId, seen[0]!.body.sessionId, 'the next fetch closed the session');
      assert.equal(seen[1]?.body.sessionEpoch, 0, 'and opened a new one');
      // The refresh goes out beside the next fetch, as Kafka's Metadata.requestUpdate: wait for it a little.
      const deadline = Date.now() + 5000;
      while (metadataRequests === metadataBefore && Date.now() < deadline) await consumer.poll(50);
      assert.ok(metadataRequests > metadataBefore, 'the metadata was refreshed');
    } finally {
      failNextFetches = 0;
      await consumer.close();
    }
  });
});
