// Fetch v13+ names topics by id, and an incremental fetch session keeps the id each partition was added with.
// When a topic is deleted and created again under the same name, a session opened before still holds the old
// id; Kafka's ReplicaManager.readFromLog compares that id with the id of the partition it would read and answers
// INCONSISTENT_TOPIC_ID (the Java consumer then refreshes its metadata), never the new topic's records under the
// old topic's id.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { waitFor } from '../helpers/cluster.js';
import { consumerFetchBody, fetchPartition, produceBatch, type WireClient } from '../helpers/wire-client.js';

const NO_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const FETCH_VERSION = 13;

/** A consumer's Fetch v13 of partition 0 of the topic `topicId`, with the session fields given. */
function fetchById(topicId: string | null, offset: number, sessionId: number, sessionEpoch: number) {
  const topics = topicId === null ? [] : [{ topicId, partitions: [fetchPartition(0, offset)] }];
  return consumerFetchBody(topics, { minBytes: 0, sessionId, sessionEpoch });
}

async function topicIdOf(client: WireClient, topic: string): Promise<string> {
  const md = await client.call(ApiKey.METADATA, 12, {
    topics: [{ topicId: NO_ID, name: topic }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  assert.equal(md.topics[0].errorCode, ErrorCode.NONE);
  return md.topics[0].topicId;
}

/** CreateTopics until it succeeds: the broker may still be deleting the topic of that name. */
async function createAgain(client: WireClient, topic: string): Promise<void> {
  await waitFor(`${topic} created again`, async () => {
    const response = await client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    return response.topics[0].errorCode === ErrorCode.NONE ? true : undefined;
  });
}

describe('fetch sessions by topic id (Fetch v13+)', () => {
  const suite = useBrokerWithClient();

  it('answers INCONSISTENT_TOPIC_ID for a session partition whose topic was deleted and created again', async () => {
    const topic = 'recreated';
    await createAgain(suite.client, topic);
    assert.equal(
      (await produceBatch(suite.client, topic, buildBatch([{ value: 'old' }]))).errorCode,
      ErrorCode.NONE,
    );
    const oldId = await topicIdOf(suite.client, topic);
    // A consumer that has read the old topic's record opens a session at offset 1.
    const full = await suite.client.call(ApiKey.FETCH, FETCH_VERSION, fetchById(oldId, 1, 0, 0));
    assert.equal(full.errorCode, ErrorCode.NONE);
    assert.equal(full.responses[0].partitions[0].errorCode, ErrorCode.NONE);
    const sessionId: number = full.sessionId;
    assert.ok(sessionId > 0, 'the full fetch opened a session');

    const deleted = await suite.client.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: [topic],
      timeoutMs: 5000,
    });
    assert.equal(deleted.responses[0].errorCode, ErrorCode.NONE);
    await createAgain(suite.client, topic);
    for (const value of ['new-0', 'new-1', 'new-2']) {
      const produced = await produceBatch(suite.client, topic, buildBatch([{ value }]));
      assert.equal(produced.errorCode, ErrorCode.NONE);
    }
    const newId = await topicIdOf(suite.client, topic);
    assert.notEqual(newId, oldId, 'the new topic has an id of its own');

    // The consumer has not refreshed its metadata: its incremental fetch names nothing, the session still holds
    // partition 0 of the old id at offset 1.
    const incremental = await suite.client.call(
      ApiKey.FETCH,
      FETCH_VERSION,
      fetchById(null, 0, sessionId, 1),
    );
    assert.equal(incremental.errorCode, ErrorCode.NONE);
    assert.equal(incremental.responses.length, 1, 'the session partition is answered');
    const answered = incremental.responses[0];
    assert.equal(answered.topicId, oldId);
    const partition = answered.partitions[0];
    assert.equal(partition.errorCode, ErrorCode.INCONSISTENT_TOPIC_ID);
    assert.equal(partition.records?.length ?? 0, 0, "no records of the new topic under the old topic's id");

    // A fetch by the new id reads the new topic.
    const byNewId = await suite.client.call(ApiKey.FETCH, FETCH_VERSION, fetchById(newId, 0, 0, -1));
    assert.equal(byNewId.responses[0].partitions[0].errorCode, ErrorCode.NONE);
    assert.ok(byNewId.responses[0].partitions[0].records.length > 0);
  });

  // Kafka's FetchManager.newContext: a session opened by Fetch v13+ holds its partitions by topic id, one opened by
  // v12 or older by name; an incremental fetch of the other kind cannot be squared with it (it would add the same
  // partition a second time under another key) and is answered FETCH_SESSION_TOPIC_ID_ERROR, the session left as
  // it was. A full fetch of either kind may close it and open a new one.
  for (const [opened, continued] of [
    [FETCH_VERSION, 12],
    [12, FETCH_VERSION],
  ] as const) {
    it(`answers FETCH_SESSION_TOPIC_ID_ERROR to a v${continued} incremental fetch of a v${opened} session`, async () => {
      const topic = `session-kind-${opened}`;
      await createAgain(suite.client, topic);
      const topicId = await topicIdOf(suite.client, topic);
      const body = (version: number, sessionId: number, sessionEpoch: number) =>
        consumerFetchBody(
          [
            version >= 13
              ? { topicId, partitions: [fetchPartition(0, 0)] }
              : { topic, partitions: [fetchPartition(0, 0)] },
          ],
          { minBytes: 0, sessionId, sessionEpoch },
        );
      const full = await suite.client.call(ApiKey.FETCH, opened, body(opened, 0, 0));
      assert.equal(full.errorCode, ErrorCode.NONE);
      const sessionId: number = full.sessionId;
      assert.ok(sessionId > 0, 'the full fetch opened a session');

      const other = await suite.client.call(ApiKey.FETCH, continued, body(continued, sessionId, 1));
      assert.equal(other.errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
      assert.equal(other.responses.length, 0);

      // The session is as it was: a fetch of its own kind at the same epoch goes on.
      const same = await suite.client.call(
        ApiKey.FETCH,
        opened,
        consumerFetchBody([], { minBytes: 0, sessionId, sessionEpoch: 1 }),
      );
      assert.equal(same.errorCode, ErrorCode.NONE);
      assert.equal(same.sessionId, sessionId);
    });
  }
});
