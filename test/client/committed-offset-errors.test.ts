// A consumer with a group starts each partition at the group's committed offset, and falls back to
// auto.offset.reset only when the group has none. When the committed offsets cannot be read for good (no READ on
// the group: OffsetFetch answers GROUP_AUTHORIZATION_FAILED), Kafka's consumer throws from poll() and position()
// (GroupAuthorizationException) rather than start where auto.offset.reset says, which would skip records or read
// them again without telling anyone. Against a broker with ACLs, over SASL/PLAIN.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaProtocolError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AclOperation as Op, ResourceType as RT } from '../../src/security/authorizer/acl-types.js';
import { ACL_USERS, type AclBroker, addAcls, startAclBroker } from '../helpers/acl-broker.js';

const TOPIC = 'committed-errors';
const GROUP = 'committed-errors-group';
let b: AclBroker;

before(async () => {
  b = await startAclBroker();
  const bootstrapServers = `127.0.0.1:${b.plainPort}`;
  const admin = new Admin({ bootstrapServers });
  const producer = new Producer({ bootstrapServers });
  try {
    await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    await producer.sendBatch(
      Array.from({ length: 10 }, (_, i) => ({ topic: TOPIC, value: Buffer.from(`${i}`) })),
    );
    const [committed] = await admin.alterConsumerGroupOffsets(GROUP, [
      { topic: TOPIC, partition: 0, offset: 7 },
    ]);
    assert.equal(committed!.error, null);
  } finally {
    await producer.close();
    await admin.close();
  }
  const wire = await b.admin();
  try {
    await addAcls(wire, [
      { resourceType: RT.TOPIC, resourceName: TOPIC, principal: 'User:bob', operation: Op.READ },
    ]);
  } finally {
    wire.close();
  }
});
after(() => b?.broker.stop());

test('a consumer that may not read its group’s offsets fails poll() and position(), no reset', async () => {
  const consumer = new Consumer({
    bootstrapServers: `127.0.0.1:${b.saslPort}`,
    sasl: { mechanism: 'plain', username: 'bob', password: ACL_USERS.bob },
    groupId: GROUP,
    autoOffsetReset: 'earliest',
    enableAutoCommit: false,
  });
  const tp = { topic: TOPIC, partition: 0 };
  try {
    consumer.assign([tp]);
    const isGroupAuthorizationFailed = (err: unknown) =>
      err instanceof KafkaProtocolError && err.code === ErrorCode.GROUP_AUTHORIZATION_FAILED;
    await assert.rejects(consumer.poll(500), isGroupAuthorizationFailed);
    await assert.rejects(consumer.position(tp), isGroupAuthorizationFailed);

    // Once bob may read the group, the same consumer starts at the committed offset, not at the earliest.
    const wire = await b.admin();
    try {
      await addAcls(wire, [
        { resourceType: RT.GROUP, resourceName: GROUP, principal: 'User:bob', operation: Op.READ },
      ]);
    } finally {
      wire.close();
    }
    assert.equal(await consumer.position(tp), 7);
    const offsets: number[] = [];
    for (const deadline = Date.now() + 20_000; offsets.length < 3 && Date.now() < deadline; )
      for (const r of await consumer.poll(200)) offsets.push(r.offset);
    assert.deepEqual(offsets, [7, 8, 9]);
  } finally {
    await consumer.close();
  }
});
