// Admin.createTopics with malformed arguments, against an in-process broker. As Kafka's KafkaAdminClient, a topic
// whose name cannot be represented in a request (none, or empty) is failed with InvalidTopicException without
// being sent, the others still go out, a name given twice is sent once, and nothing is sent when no topic is left.
// A JavaScript caller can pass what Java's types rule out: a count that is not an integer fails its topic with the
// count's Kafka error (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT), a config value
// that is not a string with INVALID_CONFIG; an argument that is not an array is refused with a TypeError.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewTopic } from '../../src/client/admin.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

describe('Admin.createTopics argument checks', () => {
  const suite = useAdminWithBroker();

  it('refuses an argument that is not an array with a TypeError', async () => {
    const clear = { name: 'TypeError', message: /createTopics takes an array of topics/ };
    await assert.rejects(suite.admin.createTopics('t' as unknown as NewTopic[]), clear);
    await assert.rejects(suite.admin.createTopics(null as unknown as NewTopic[]), clear);
  });

  it('fails each malformed topic with its Kafka error and creates the others', async () => {
    const topics = [
      { topic: 'args-ok', numPartitions: 2, replicationFactor: 1 },
      { numPartitions: 1 },
      { topic: '' },
      null,
      { topic: 'args-fraction', numPartitions: 1.5 },
      { topic: 'args-rf-string', replicationFactor: '1' },
      { topic: 'args-assignment', replicaAssignment: { zero: [0] } },
      { topic: 'args-assignment-ids', replicaAssignment: { 0: 'broker 0' } },
      { topic: 'args-config', configs: { 'retention.ms': 1000 } },
    ] as unknown as NewTopic[];
    const results = await suite.admin.createTopics(topics);
    const codes = results.map((r) => [r.topic, r.error === null ? 0 : r.error.code]);
    assert.deepEqual(codes, [
      ['args-ok', ErrorCode.NONE],
      ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['args-fraction', ErrorCode.INVALID_PARTITIONS],
      ['args-rf-string', ErrorCode.INVALID_REPLICATION_FACTOR],
      ['args-assignment', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ['args-assignment-ids', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ['args-config', ErrorCode.INVALID_CONFIG],
    ]);
    for (const r of results) if (r.error !== null) assert.ok(r.error instanceof KafkaProtocolError);
    assert.deepEqual(
      (await suite.admin.listTopics()).filter((t) => t.startsWith('args-')),
      ['args-ok'],
    );
  });

  it('sends a name given twice once, and nothing when no topic is left', async () => {
    const results = await suite.admin.createTopics([
      { topic: 'args-twice' },
      { topic: 'args-twice', numPartitions: 3 },
    ]);
    assert.deepEqual(
      results.map((r) => [r.topic, r.error]),
      [['args-twice', null]],
    );
    const none = await suite.admin.createTopics([{ topic: '' }]);
    assert.equal(none.length, 1);
    assert.equal(none[0]!.error?.code, ErrorCode.INVALID_TOPIC_EXCEPTION);
  });
});
