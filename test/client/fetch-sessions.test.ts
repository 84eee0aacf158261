// The consumer's fetch sessions at close() and after odd answers, against an in-process broker whose interceptor
// sees the consumer's Fetch requests and rewrites answers. As Kafka's consumer: close() sends each broker it holds a
// session with a Fetch of that session with epoch -1 (FINAL_EPOCH, AbstractFetch.prepareCloseFetchSessionRequests),
// which frees the session's slot in the broker's cache at once instead of when it is evicted; a top-level Fetch
// error is not poll()'s to throw, the session starts over (FetchSessionHandler.handleResponse); an answer naming a
// partition the session does not hold, or a full answer leaving one out, is dropped and the session starts over
// (verifyIncrementalFetchResponsePartitions, verifyFullFetchResponsePartitions).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerServices } from '../../src/broker/broker-services.js';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { FetchRequest, FetchResponse } from '../../src/protocol/messages/01-fetch.js';
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
  /** Rewrites the answer to the next consumer Fetch `when` accepts (then cleared). */
  let rewrite: { when: (f: FetchRequest) => boolean; answer: (res: FetchResponse) => FetchResponse } | null =
    null;
  /** Answers the next consumer Fetch requests with this top-level error, without handling them (counted down). */
  let failNext = 0;

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
      if (body.replicaId >= 0 || body.replicaState.replicaId >= 0) return undefined;
      fetches.push(structuredClone(body));
      if (failNext > 0) {
        failNext--;
        const failed: FetchResponse = {
          throttleTimeMs: 0,
          errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
          sessionId: 0,
          responses: [],
          nodeEndpoints: [],
        };
        return failed;
      }
      const r = rewrite;
      if (r === null || !r.when(body)) return undefined;
      rewrite = null;
      return request.handle().then((res) => r.answer(res as FetchResponse));
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

  async function produce(topic: string, partition: number, values: string[]): Promise<void> {
    for (const v of values) await producer.send({ topic, partition, value: Buffer.from(v) });
  }

  it('a top-level error is not thrown from poll(): the session starts over and the consumer reads on', async () => {
    const topic = 'session-top-level-error';
    await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
    await produce(topic, 0, ['a', 'b']);
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 2), ['a', 'b']);
      await consumer.poll(200);
      const sessionId = fetches.at(-1)!.sessionId;
      assert.notEqual(sessionId, 0, 'in a session');
      const from = fetches.length;
      failNext = 2;
      await produce(topic, 0, ['c', 'd']);
      assert.deepEqual(await consume(consumer, 2), ['c', 'd']);
      const after = fetches.slice(from);
      assert.deepEqual(
        after.slice(0, 3).map((f) => [f.sessionId, f.sessionEpoch]),
        [
          [sessionId, after[0]!.sessionEpoch],
          [sessionId, 0],
          [sessionId, 0],
        ],
        'after each error the next fetch closes the old session and opens a new one',
      );
    } finally {
      failNext = 0;
      await consumer.close();
    }
  });

  it('an incremental answer naming a partition outside the session is dropped; the session starts over', async () => {
    const topic = 'session-extra-partition';
    const [created] = await admin.createTopics([{ topic, numPartitions: 2, replicationFactor: 1 }]);
    await produce(topic, 0, ['a', 'b']);
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([{ topic, partition: 0 }]);
      assert.deepEqual(await consume(consumer, 2), ['a', 'b']);
      await consumer.poll(200);
      const sessionId = fetches.at(-1)!.sessionId;
      assert.notEqual(sessionId, 0, 'in a session');
      let rewritten = -1;
      rewrite = {
        when: (f) => f.sessionEpoch > 0,
        answer: (res) => {
          rewritten = fetches.length - 1;
          const named = res.responses[0] ?? {
            topic,
            topicId: created!.topicId,
            partitions: [],
          };
          named.partitions.push(emptyPartition(1));
          return { ...res, responses: [named] };
        },
      };
      await produce(topic, 0, ['c', 'd']);
      assert.deepEqual(await consume(consumer, 2), ['c', 'd'], 'read once each, nothing lost');
      assert.ok(rewritten >= 0, 'an answer was rewritten');
      const next = fetches[rewritten + 1]!;
      assert.deepEqual(
        [next.sessionId, next.sessionEpoch],
        [sessionId, 0],
        'the next fetch closes the session and opens a new one',
      );
    } finally {
      rewrite = null;
      await consumer.close();
    }
  });

  it('a full answer without a partition asked for is dropped; the next fetch starts without a session', async () => {
    const topic = 'session-omitted-partition';
    await admin.createTopics([{ topic, numPartitions: 2, replicationFactor: 1 }]);
    await produce(topic, 0, ['a']);
    await produce(topic, 1, ['b']);
    let rewritten = -1;
    rewrite = {
      when: (f) => f.sessionEpoch === 0 && f.topics.some((t) => t.partitions.length === 2),
      answer: (res) => {
        rewritten = fetches.length - 1;
        for (const t of res.responses) t.partitions = t.partitions.filter((p) => p.partitionIndex !== 1);
        return res;
      },
    };
    const consumer = new Consumer({ bootstrapServers, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
    try {
      consumer.assign([
        { topic, partition: 0 },
        { topic, partition: 1 },
      ]);
      assert.deepEqual((await consume(consumer, 2)).sort(), ['a', 'b'], 'read once each, nothing lost');
      assert.ok(rewritten >= 0, 'an answer was rewritten');
      const next = fetches[rewritten + 1]!;
      assert.deepEqual(
        [next.sessionId, next.sessionEpoch],
        [0, 0],
        'the next fetch is full, without a session',
      );
    } finally {
      rewrite = null;
      await consumer.close();
    }
  });
});

/** A partition's answer with no records and no error. */
function emptyPartition(partitionIndex: number): FetchResponse['responses'][number]['partitions'][number] {
  return {
    partitionIndex,
    errorCode: 0,
    highWatermark: 0n,
    lastStableOffset: 0n,
    logStartOffset: 0n,
    divergingEpoch: { epoch: -1, endOffset: -1n },
    currentLeader: { leaderId: -1, leaderEpoch: -1 },
    snapshotId: { endOffset: -1n, epoch: -1 },
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: null,
  };
}
