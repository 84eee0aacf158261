// CreateTopics, CreatePartitions and DeleteTopics with a timeout_ms of 0 or less, over the wire: as Kafka's
// ZkAdminManager, the change is made and every topic that got that far is answered REQUEST_TIMED_OUT at once
// (librdkafka, whose default operation timeout is 0, hides that code from its callers); topics refused before are
// answered with their own error, and validate_only answers NONE.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/messages/codec-support.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { untilValue } from '../helpers/wait.js';
import type { WireClient } from '../helpers/wire-client.js';

function newTopic(name: string, numPartitions = 1) {
  return { name, numPartitions, replicationFactor: 1, assignments: [], configs: [] };
}

/** The partition count this broker's metadata shows for `topic`, or null when it does not know the topic. */
async function partitionCount(client: WireClient, topic: string): Promise<number | null> {
  const response = await client.call(ApiKey.METADATA, 9, {
    topics: [{ topicId: ZERO_UUID, name: topic }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  const found = response.topics[0];
  return found.errorCode === ErrorCode.NONE ? found.partitions.length : null;
}

describe('topic administration with a timeout of 0', () => {
  const suite = useBrokerWithClient();

  it('CreateTopics answers REQUEST_TIMED_OUT for a topic it creates, its own error for one it refuses, NONE for validate_only', async () => {
    const { client } = suite;
    const created = await client.call(ApiKey.CREATE_TOPICS, 7, {
      topics: [newTopic('zero-made', 2), newTopic('bad name!')],
      timeoutMs: 0,
      validateOnly: false,
    });
    const [made, bad] = created.topics;
    assert.equal(made.errorCode, ErrorCode.REQUEST_TIMED_OUT);
    assert.equal(made.errorMessage, null);
    // Kafka resets what a failed creation would have reported, but the topic id was written and stays.
    assert.equal(made.numPartitions, -1);
    assert.equal(made.replicationFactor, -1);
    assert.notEqual(made.topicId, ZERO_UUID);
    assert.equal(bad.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
    // The creation goes on.
    assert.equal(await untilValue('zero-made in the metadata', () => partitionCount(client, 'zero-made')), 2);

    const existing = await client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [newTopic('zero-made')],
      timeoutMs: 0,
      validateOnly: false,
    });
    assert.equal(existing.topics[0].errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    const dry = await client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [newTopic('zero-dry')],
      timeoutMs: -1,
      validateOnly: true,
    });
    assert.equal(dry.topics[0].errorCode, ErrorCode.NONE);
  });

  it('CreatePartitions and DeleteTopics answer REQUEST_TIMED_OUT and still make the change', async () => {
    const { client } = suite;
    const made = await client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [newTopic('zero-grown')],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    assert.equal(made.topics[0].errorCode, ErrorCode.NONE);

    const dry = await client.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [{ name: 'zero-grown', count: 2, assignments: null }],
      timeoutMs: 0,
      validateOnly: true,
    });
    assert.equal(dry.results[0].errorCode, ErrorCode.NONE);
    const grown = await client.call(ApiKey.CREATE_PARTITIONS, 2, {
      topics: [
        { name: 'zero-grown', count: 3, assignments: null },
        { name: 'zero-missing', count: 3, assignments: null },
      ],
      timeoutMs: 0,
      validateOnly: false,
    });
    const byName = new Map(
      grown.results.map((r: { name: string; errorCode: number }) => [r.name, r.errorCode]),
    );
    assert.equal(byName.get('zero-grown'), ErrorCode.REQUEST_TIMED_OUT);
    assert.equal(byName.get('zero-missing'), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await untilValue('zero-grown with 3 partitions', async () =>
      (await partitionCount(client, 'zero-grown')) === 3 ? true : null,
    );

    const deleted = await client.call(ApiKey.DELETE_TOPICS, 4, {
      topics: [],
      topicNames: ['zero-grown', 'zero-missing'],
      timeoutMs: 0,
    });
    assert.deepEqual(
      deleted.responses.map((r: { name: string; errorCode: number }) => [r.name, r.errorCode]),
      [
        ['zero-grown', ErrorCode.REQUEST_TIMED_OUT],
        ['zero-missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    await untilValue('zero-grown gone from the metadata', async () =>
      (await partitionCount(client, 'zero-grown')) === null ? true : null,
    );
  });
});
