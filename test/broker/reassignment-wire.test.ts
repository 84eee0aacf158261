// AlterPartitionReassignments (45) and ListPartitionReassignments (46) against one broker process, which is its
// own controller: ApiVersions advertises them, and each refusal carries Kafka's error code. The moves themselves
// and NOT_CONTROLLER from a broker that is not the controller are in test/cluster/reassignment.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic } from '../helpers/wire-client.js';

describe('partition reassignment requests on a single broker', () => {
  function alter(topic: string, partitionIndex: number, replicas: number[] | null) {
    return suite.client.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {
      timeoutMs: 5000,
      topics: [{ name: topic, partitions: [{ partitionIndex, replicas }] }],
    });
  }

  async function partitionError(topic: string, partitionIndex: number, replicas: number[] | null) {
    const response = await alter(topic, partitionIndex, replicas);
    assert.equal(response.errorCode, ErrorCode.NONE, 'the request as a whole is accepted');
    const p = response.responses[0].partitions[0];
    return { code: p.errorCode as number, message: p.errorMessage as string | null };
  }

  const suite = useBrokerWithClient({}, (suite) => createTopic(suite.client, 'placed', { numPartitions: 1 }));

  it('advertises both APIs at version 0 in ApiVersions', async () => {
    const response = await suite.client.call(ApiKey.API_VERSIONS, 3, {
      clientSoftwareName: 'brook-test',
      clientSoftwareVersion: '1.0',
    });
    for (const apiKey of [ApiKey.ALTER_PARTITION_REASSIGNMENTS, ApiKey.LIST_PARTITION_REASSIGNMENTS]) {
      assert.deepEqual(
        response.apiKeys.find((k: { apiKey: number }) => k.apiKey === apiKey),
        { apiKey, minVersion: 0, maxVersion: 0 },
      );
    }
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition', async () => {
    assert.equal((await partitionError('no-such-topic', 0, [0])).code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await partitionError('placed', 5, [0])).code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('answers INVALID_REPLICA_ASSIGNMENT for an empty, duplicated, negative or dead replica list', async () => {
    for (const replicas of [[], [0, 0], [-1], [0, 7]]) {
      const { code, message } = await partitionError('placed', 0, replicas);
      assert.equal(code, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `replicas [${replicas.join(',')}]`);
      assert.ok(message !== null && message.length > 0, 'with a message');
    }
    const bad = await partitionError('placed', 0, [0, 7]);
    assert.match(bad.message!, /not alive/);
  });

  it('answers NO_REASSIGNMENT_IN_PROGRESS when cancelling a partition that is not moving', async () => {
    assert.equal((await partitionError('placed', 0, null)).code, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
  });

  it('accepts the current replicas as a no-op, and lists no reassignment', async () => {
    assert.equal((await partitionError('placed', 0, [0])).code, ErrorCode.NONE);
    const all = await suite.client.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
      timeoutMs: 5000,
      topics: null,
    });
    assert.equal(all.errorCode, ErrorCode.NONE);
    assert.deepEqual(all.topics, []);
    const named = await suite.client.call(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, {
      timeoutMs: 5000,
      topics: [{ name: 'placed', partitionIndexes: [0, 1] }],
    });
    assert.deepEqual(named.topics, []);
  });
});
