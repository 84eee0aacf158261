// Admin.deleteTopics with malformed arguments, against an in-process broker. As Kafka's KafkaAdminClient
// (handleDeleteTopicsUsingNames), a name that cannot be represented in a request (none, or empty) fails with
// InvalidTopicException without being sent, a name given twice is sent once, and nothing is sent when no name is
// left; an argument that is not an array is refused with a TypeError.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ErrorCode } from '../../src/protocol/errors.js';
import { useAdminWithBroker } from '../helpers/admin-suite.js';

describe('Admin.deleteTopics argument checks', () => {
  const suite = useAdminWithBroker();

  it('refuses an argument that is not an array with a TypeError', async () => {
    const clear = { name: 'TypeError', message: /deleteTopics takes an array of topic names/ };
    await assert.rejects(suite.admin.deleteTopics('t' as unknown as string[]), clear);
  });

  it('fails a name that cannot be sent, and sends a name given twice once', async () => {
    const [created] = await suite.admin.createTopics([{ topic: 'del-twice', numPartitions: 1 }]);
    assert.equal(created!.error, null);
    const results = await suite.admin.deleteTopics(['del-twice', '', 'del-twice', null as unknown as string]);
    assert.deepEqual(
      results.map((r) => [r.topic, r.error === null ? 0 : r.error.code]),
      [
        ['del-twice', ErrorCode.NONE],
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION],
      ],
    );
    const none = await suite.admin.deleteTopics(['']);
    assert.deepEqual(
      none.map((r) => [r.topic, r.error?.code]),
      [['', ErrorCode.INVALID_TOPIC_EXCEPTION]],
    );
  });
});
