// Admin calls beyond createTopics/deleteTopics with malformed arguments, against an in-process broker, as Kafka's
// KafkaAdminClient treats them: createPartitions and deleteGroups send an entity given twice once (Kafka's maps and
// sets hold it once), a group id that is missing fails with INVALID_GROUP_ID without a coordinator lookup
// (CoordinatorStrategy's unrepresentable keys; the empty one is sent), a broker config resource whose name is not a broker id refuses the
// call at once (KafkaAdminClient.nodeFor: NumberFormatException); values Java's types rule out fail their entity
// with that field's Kafka error instead of going out truncated or throwing a raw TypeError.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

const codeOf = (error: { code: number } | null): number => (error === null ? 0 : error.code);

describe('Admin argument checks of the other calls', () => {
  // A call that retried a hopeless request would hang until this timeout instead of failing at once.
  const suite = useAdminWithBroker({ defaultApiTimeoutMs: 10_000 });

  it('createPartitions sends a topic given twice once and fails what cannot be sent', async () => {
    const { admin } = suite;
    const [created] = await admin.createTopics([{ topic: 'parts-args', numPartitions: 1 }]);
    assert.equal(created!.error, null);
    const entries = [
      { topic: 'parts-args', count: 2 },
      { topic: 'parts-args', count: 3 },
      null,
      { topic: 'parts-args', count: 4.5 },
      { topic: 'parts-args', count: 5, assignments: [['b']] },
    ] as unknown as { topic: string; count: number }[];
    const results = await admin.createPartitions(entries);
    assert.deepEqual(
      results.map((r) => [r.topic, codeOf(r.error)]),
      [
        ['parts-args', ErrorCode.NONE],
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['parts-args', ErrorCode.INVALID_PARTITIONS],
        ['parts-args', ErrorCode.INVALID_REPLICA_ASSIGNMENT],
      ],
    );
    const [topic] = await admin.describeTopics(['parts-args']);
    assert.equal(topic!.partitions.length, 2, 'the first entry alone was applied');
    assert.deepEqual(await admin.createPartitions([]), []);
    await assert.rejects(admin.createPartitions('parts-args' as never), { name: 'TypeError' });
  });

  it('deleteGroups fails a group id that cannot be sent, sends the empty one and deletes a group given twice once', async () => {
    const { admin } = suite;
    const started = Date.now();
    const results = await admin.deleteGroups([
      '',
      null as unknown as string,
      'no-such-group',
      'no-such-group',
    ]);
    assert.deepEqual(
      results.map((r) => [r.groupId, codeOf(r.error)]),
      [
        ['', ErrorCode.GROUP_ID_NOT_FOUND],
        ['', ErrorCode.INVALID_GROUP_ID],
        ['no-such-group', ErrorCode.GROUP_ID_NOT_FOUND],
      ],
    );
    assert.ok(Date.now() - started < 5_000);
  });

  it('a broker config resource that names no broker refuses the call at once', async () => {
    const { admin } = suite;
    const started = Date.now();
    const clear = { name: 'RangeError', message: /does not name a broker id/ };
    await assert.rejects(admin.describeConfigs([{ type: 'broker', name: 'broker-one' }]), clear);
    await assert.rejects(admin.alterConfigs([{ type: 'broker', name: '1.5', configs: {} }]), clear);
    await assert.rejects(
      admin.incrementalAlterConfigs([{ type: 'broker-logger', name: '', ops: [] }]),
      clear,
    );
    assert.ok(Date.now() - started < 5_000, 'refused without retrying until the timeout');
    const [cluster] = await admin.describeConfigs([{ type: 'broker', name: '' }]);
    assert.equal(cluster!.error, null, 'the empty broker name is the cluster default');
  });

  it('incrementalAlterConfigs fails a resource with an unknown operation without sending it', async () => {
    const { admin } = suite;
    const [created] = await admin.createTopics([{ topic: 'configs-args', numPartitions: 1 }]);
    assert.equal(created!.error, null);
    const [result] = await admin.incrementalAlterConfigs([
      {
        type: 'topic',
        name: 'configs-args',
        ops: [{ name: 'retention.ms', op: 'put' as never, value: '1234' }],
      },
    ]);
    assert.equal(codeOf(result!.error), ErrorCode.INVALID_REQUEST);
    const [described] = await admin.describeConfigs([
      { type: 'topic', name: 'configs-args', keys: ['retention.ms'] },
    ]);
    assert.notEqual(described!.configs[0]!.value, '1234', 'the unknown operation was not applied as SET');
  });

  it('deleteRecords fails a partition that cannot be sent and deletes from the others', async () => {
    const { admin } = suite;
    const [created] = await admin.createTopics([{ topic: 'records-args', numPartitions: 1 }]);
    assert.equal(created!.error, null);
    const entries = [
      { topic: 'records-args', partition: 0, offset: 0 },
      { topic: '', partition: 0, offset: 0 },
      null,
      { topic: 'records-args', partition: 0, offset: 1.5 },
    ] as unknown as { topic: string; partition: number; offset: number }[];
    const results = await admin.deleteRecords(entries);
    assert.deepEqual(
      results.map((r) => [r.topic, codeOf(r.error)]).sort(),
      [
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['records-args', ErrorCode.NONE],
        ['records-args', ErrorCode.OFFSET_OUT_OF_RANGE],
      ].sort(),
    );
  });

  it('listOffsets refuses a partition with no topic or an unknown spec before sending anything', async () => {
    const { admin } = suite;
    const invalidTopic = { code: ErrorCode.INVALID_TOPIC_EXCEPTION };
    await assert.rejects(admin.listOffsets([{ topic: '', partition: 0, spec: 'latest' }]), invalidTopic);
    await assert.rejects(admin.listOffsets([null as never]), invalidTopic);
    await assert.rejects(
      admin.listOffsets([{ topic: 'records-args', partition: 0, spec: 'newest' as never }]),
      {
        name: 'TypeError',
        message: /offset spec of records-args-0/,
      },
    );
    const [latest] = await admin.listOffsets([{ topic: 'records-args', partition: 0, spec: 'latest' }]);
    assert.equal(latest!.offset, 0);
  });
});
