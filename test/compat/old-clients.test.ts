// Old clients' request versions over the wire, checked against what Kafka's broker answers them: records
// stored as v2 batches and read back by Fetch v0-v3 (Kafka's RecordsUtil.downConvert).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { buildMessageSet, decodeMessageSet } from '../../src/protocol/records/legacy-message.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { waitForCoordinator } from '../helpers/offset-commits.js';
import { createTopic, fetchBody, type WireClient } from '../helpers/wire-client.js';

describe('old clients against a Brook broker', () => {
  const suite = useBrokerWithClient({}, (suite) =>
    createTopic(suite.client, 'old-fetch', { numPartitions: 1 }),
  );

  async function produceBatch(topic: string, values: string[], compression = 0): Promise<void> {
    const response = await suite.client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: topic,
          partitionData: [
            {
              index: 0,
              records: buildBatch(
                values.map((value) => ({ value })),
                { compression },
              ),
            },
          ],
        },
      ],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
  }

  it('leaves out the records before the fetch offset of an uncompressed v2 batch given as magic 0 or 1', async () => {
    // Offsets 0-3 in one uncompressed batch, 4-6 in one gzip batch.
    await produceBatch('old-fetch', ['a', 'b', 'c', 'd']);
    await produceBatch('old-fetch', ['e', 'f', 'g'], 1);
    for (const version of [0, 1, 2, 3]) {
      const fromMiddle = await suite.client.call(ApiKey.FETCH, version, fetchBody('old-fetch', 0, 2));
      const data = fromMiddle.responses[0].partitions[0];
      assert.equal(data.errorCode, ErrorCode.NONE);
      // Uncompressed magic 0/1 messages are one per entry: Kafka drops those before the fetch offset. A
      // compressed wrapper is kept whole, as in Kafka, and the client skips its early messages.
      assert.deepEqual(
        decodeMessageSet(data.records).messages.map((m) => m.offset),
        [2, 3, 4, 5, 6],
        `fetch v${version} from offset 2`,
      );
      const fromGzipMiddle = await suite.client.call(ApiKey.FETCH, version, fetchBody('old-fetch', 0, 5));
      assert.deepEqual(
        decodeMessageSet(fromGzipMiddle.responses[0].partitions[0].records).messages.map((m) => m.offset),
        [4, 5, 6],
        `fetch v${version} from offset 5`,
      );
    }
  });

  it('stores a lone message of a byte or two from Produce v0-v2, as librdkafka sends one', async () => {
    await createTopic(suite.client, 'old-small', { numPartitions: 1 });
    for (const [version, magic, value] of [
      [0, 0, Buffer.from('1')],
      [0, 0, null],
      [1, 0, Buffer.from('22')],
      [2, 1, Buffer.from('3')],
    ] as const) {
      const set = buildMessageSet([{ offset: 0, timestamp: 1_700_000_000_000, key: null, value }], { magic });
      const response = await suite.client.call(ApiKey.PRODUCE, version, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'old-small', partitionData: [{ index: 0, records: set }] }],
      });
      assert.equal(
        response.responses[0].partitionResponses[0].errorCode,
        ErrorCode.NONE,
        `produce v${version}`,
      );
    }
    const fetched = await suite.client.call(ApiKey.FETCH, 2, fetchBody('old-small', 0, 0));
    assert.deepEqual(
      decodeMessageSet(fetched.responses[0].partitions[0].records).messages.map(
        (m) => m.value?.toString() ?? null,
      ),
      ['1', null, '22', '3'],
    );
  });

  it('answers CORRUPT_MESSAGE to a produce of fewer bytes than a message header, without harm', async () => {
    for (const size of [10, 17, 20, 25]) {
      const response = await suite.client.call(ApiKey.PRODUCE, 0, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'old-small', partitionData: [{ index: 0, records: Buffer.alloc(size) }] }],
      });
      assert.equal(
        response.responses[0].partitionResponses[0].errorCode,
        ErrorCode.CORRUPT_MESSAGE,
        `${size} bytes`,
      );
    }
  });

  // Kafka's KafkaApis: OffsetCommit v0 and OffsetFetch v0 keep a 0.8.1 consumer's offsets in ZooKeeper, under
  // /consumers/<group>/offsets/<topic>/<partition>, apart from the offsets of __consumer_offsets; a partition with
  // no offset there answers UNKNOWN_TOPIC_OR_PARTITION.
  it('keeps OffsetCommit v0 offsets apart, in the coordination store, as Kafka keeps them in ZooKeeper', async () => {
    const group = 'zk-offsets';
    const fetchOffset = async (version: number) => {
      const r = await suite.client.call(ApiKey.OFFSET_FETCH, version, {
        groupId: group,
        topics: [{ name: 'old-fetch', partitionIndexes: [0] }],
        requireStable: false,
        groups: [],
      });
      const p = r.topics[0].partitions[0];
      return [Number(p.committedOffset), p.errorCode];
    };
    const commit = (version: number, offset: number) =>
      commitOffset(suite.client, version, group, offset, '');
    assert.deepEqual(
      await fetchOffset(0),
      [-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      'nothing committed yet',
    );
    assert.equal(await commit(0, 3), ErrorCode.NONE);
    assert.deepEqual(await fetchOffset(0), [3, ErrorCode.NONE]);
    await waitForCoordinator(suite.client, group);
    assert.deepEqual(
      await fetchOffset(1),
      [-1, ErrorCode.NONE],
      'v1 reads __consumer_offsets, which has none',
    );
    assert.equal(await commit(2, 5), ErrorCode.NONE);
    assert.deepEqual(await fetchOffset(1), [5, ErrorCode.NONE]);
    assert.deepEqual(await fetchOffset(0), [3, ErrorCode.NONE], 'v0 still reads its own');
  });

  // Kafka's GroupMetadataManager measures the metadata as a Java String's length (UTF-16 units), not in bytes.
  it('takes commit metadata of offset.metadata.max.bytes characters, however many bytes they encode to', async () => {
    const group = 'metadata-length';
    await waitForCoordinator(suite.client, group);
    const commit = (metadata: string) => commitOffset(suite.client, 2, group, 1, metadata);
    assert.equal(await commit('\u00e9'.repeat(4096)), ErrorCode.NONE, '4096 characters, 8192 bytes');
    assert.equal(await commit('e'.repeat(4097)), ErrorCode.OFFSET_METADATA_TOO_LARGE);
  });
});

/** OffsetCommit of `offset` for partition 0 of old-fetch, outside any generation; the partition's error code. */
async function commitOffset(
  client: WireClient,
  version: number,
  groupId: string,
  offset: number,
  metadata: string,
): Promise<number> {
  const r = await client.call(ApiKey.OFFSET_COMMIT, version, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 'old-fetch',
        partitions: [
          {
            partitionIndex: 0,
            committedOffset: BigInt(offset),
            committedLeaderEpoch: -1,
            commitTimestamp: -1n,
            committedMetadata: metadata,
          },
        ],
      },
    ],
  });
  return r.topics[0].partitions[0].errorCode;
}
