// The group calls of the admin client with a group id that Kafka's CoordinatorStrategy cannot represent (null, or
// in JavaScript anything that is not a string) fail that group with INVALID_GROUP_ID at once, without a coordinator
// lookup; the empty group id is representable (isRepresentableKey is groupId != null in Kafka 3.9) and goes to the
// broker, whose coordinator accepts it for DescribeGroups, DeleteGroups, OffsetCommit and OffsetFetch.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

const codeOf = (error: { code: number } | null): number => (error === null ? 0 : error.code);
const invalidGroup = { code: ErrorCode.INVALID_GROUP_ID };
/** A call that looked an unrepresentable group up would retry until the suite's timeout instead. */
const AT_ONCE_MS = 3_000;

describe('Admin group calls with a group id that cannot be sent', () => {
  const suite = useAdminWithBroker({ defaultApiTimeoutMs: 10_000 });

  it('describeGroups answers such a group INVALID_GROUP_ID and describes the others', async () => {
    const { admin } = suite;
    const started = Date.now();
    const described = await admin.describeGroups([null as unknown as string, 'described-group', 7 as never]);
    assert.deepEqual(
      described.map((g) => [g.groupId, codeOf(g.error)]),
      [
        ['', ErrorCode.INVALID_GROUP_ID],
        ['described-group', ErrorCode.NONE],
        ['', ErrorCode.INVALID_GROUP_ID],
      ],
    );
    assert.equal(described[1]!.state, 'Dead', 'an unknown group is described as Dead');
    assert.ok(Date.now() - started < AT_ONCE_MS);
  });

  it('alterConsumerGroupOffsets, deleteConsumerGroupOffsets and listConsumerGroupOffsets refuse it at once', async () => {
    const { admin } = suite;
    const started = Date.now();
    const partition = { topic: 'group-id-args', partition: 0 };
    await assert.rejects(
      admin.alterConsumerGroupOffsets(null as never, [{ ...partition, offset: 1 }]),
      invalidGroup,
    );
    await assert.rejects(admin.deleteConsumerGroupOffsets(undefined as never, [partition]), invalidGroup);
    await assert.rejects(admin.listConsumerGroupOffsets(null as never), invalidGroup);
    await assert.rejects(admin.listConsumerGroupOffsets(42 as never, [partition]), invalidGroup);
    const listed = await admin.listConsumerGroupOffsets(
      new Map([
        [null as unknown as string, {}],
        ['listed-group', {}],
      ]),
    );
    assert.equal(codeOf(listed.get(null as unknown as string)!.error), ErrorCode.INVALID_GROUP_ID);
    assert.equal(listed.get('listed-group')!.error, null);
    assert.ok(Date.now() - started < AT_ONCE_MS);
  });

  it('the empty group id is sent, as Kafka 3.9 sends it', async () => {
    const { admin } = suite;
    const [created] = await admin.createTopics([{ topic: 'group-id-args', numPartitions: 1 }]);
    assert.equal(created!.error, null);
    const partition = { topic: 'group-id-args', partition: 0 };
    const [altered] = await admin.alterConsumerGroupOffsets('', [{ ...partition, offset: 3 }]);
    assert.equal(altered!.error, null, 'OffsetCommit takes the empty group id');
    const listed = await admin.listConsumerGroupOffsets('', [partition]);
    assert.deepEqual(
      listed.map((o) => o.offset),
      [3],
    );
    const [described] = await admin.describeGroups(['']);
    assert.equal(described!.error, null, 'DescribeGroups takes the empty group id');
    const [deleted] = await admin.deleteGroups(['']);
    assert.equal(deleted!.groupId, '');
    assert.notEqual(
      codeOf(deleted!.error),
      ErrorCode.INVALID_GROUP_ID,
      'DeleteGroups takes the empty group id',
    );
  });
});
