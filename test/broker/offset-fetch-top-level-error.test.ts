// OffsetFetch v2-v7 answers a group the coordinator cannot serve (here a fresh broker whose group metadata topic
// does not exist yet: NOT_COORDINATOR) with the top-level error and no topics, as Kafka's KafkaApis
// (handleOffsetFetchRequestFromCoordinator: the failure becomes the group's error code alone) and
// OffsetFetchResponse's single-group form for those versions (topics copied from the group, none). v1 has no
// top-level error: Brook answers it in every partition asked for, as Kafka 2.x's getErrorResponse did (Kafka 3.9
// answers no partitions at all there; deliberate, see the handler). Against an in-process broker over a raw
// connection.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { OffsetFetchResponse } from '../../src/protocol/messages/09-offset-fetch.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { WireClient } from '../helpers/wire-client.js';

describe('OffsetFetch v1-v7 group-level errors', () => {
  let broker: InProcessBroker;
  let wire: WireClient;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    wire = await WireClient.connect('127.0.0.1', broker.port);
  });
  after(async () => {
    wire?.close();
    await broker?.stop();
  });

  it('answers the error at the top and no partitions', async () => {
    for (let version = 2; version <= 7; version++) {
      const res = await wire.call<OffsetFetchResponse>(ApiKey.OFFSET_FETCH, version, {
        groupId: 'offset-fetch-top-level-error',
        topics: [{ name: 'some-topic', partitionIndexes: [0, 1] }],
        groups: [],
        requireStable: false,
      });
      assert.equal(res.errorCode, ErrorCode.NOT_COORDINATOR, `v${version}: the top-level error`);
      assert.deepEqual(res.topics, [], `v${version}: no partitions with the group error`);
    }
  });

  it('answers v1 with the error in every partition asked for', async () => {
    const res = await wire.call<OffsetFetchResponse>(ApiKey.OFFSET_FETCH, 1, {
      groupId: 'offset-fetch-top-level-error',
      topics: [{ name: 'some-topic', partitionIndexes: [0, 1] }],
      groups: [],
      requireStable: false,
    });
    assert.deepEqual(
      res.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.committedOffset]),
      })),
      [
        {
          name: 'some-topic',
          partitions: [
            [0, ErrorCode.NOT_COORDINATOR, -1n],
            [1, ErrorCode.NOT_COORDINATOR, -1n],
          ],
        },
      ],
    );
  });
});
