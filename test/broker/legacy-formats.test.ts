// Old clients over the wire: Produce v0-v2 carry legacy message sets (magic 0 and 1, plain and compressed),
// which the broker stores as v2 batches; Fetch v0-v3 get records converted back to the magic they understand.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { buildMessageSet, decodeMessageSet } from '../../src/protocol/records/legacy-message.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import {
  consumerFetchBody,
  createTopic,
  fetchBody,
  fetchPartition,
  readPartition,
} from '../helpers/wire-client.js';

describe('legacy message formats', () => {
  const suite = useBrokerWithClient({}, (suite) => createTopic(suite.client, 'legacy', { numPartitions: 1 }));

  it('stores magic 0 and magic 1 message sets from Produce v0-v2, plain and gzip, as v2 batches', async () => {
    const sets = [
      {
        version: 0,
        set: buildMessageSet([{ offset: 0, key: Buffer.from('a'), value: Buffer.from('m0') }], { magic: 0 }),
      },
      {
        version: 1,
        set: buildMessageSet(
          [
            { offset: 0, value: Buffer.from('m0-gz-1') },
            { offset: 1, value: Buffer.from('m0-gz-2') },
          ],
          { magic: 0, compression: 1 },
        ),
      },
      {
        version: 2,
        set: buildMessageSet(
          [{ offset: 0, timestamp: 1_600_000_000_000, key: null, value: Buffer.from('m1') }],
          {
            magic: 1,
          },
        ),
      },
    ];
    let expected = 0;
    for (const { version, set } of sets) {
      const response = await suite.client.call(ApiKey.PRODUCE, version, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'legacy', partitionData: [{ index: 0, records: set }] }],
      });
      const part = response.responses[0].partitionResponses[0];
      assert.equal(part.errorCode, ErrorCode.NONE, `produce v${version}`);
      assert.equal(part.baseOffset, BigInt(expected));
      expected += decodeMessageSet(set).messages.length;
    }
    const records = await readPartition(suite.client, 'legacy', 0);
    assert.deepEqual(
      records.map((r) => [r.offset, r.value!.toString()]),
      [
        [0, 'm0'],
        [1, 'm0-gz-1'],
        [2, 'm0-gz-2'],
        [3, 'm1'],
      ],
    );
    assert.equal(records[3]!.timestamp, 1_600_000_000_000);
  });

  it('answers Fetch v0 with magic 0 and Fetch v2 with magic 1 messages, whatever was produced', async () => {
    await suite.client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'legacy',
          partitionData: [{ index: 0, records: buildBatch([{ key: 'k', value: 'v2-record' }]) }],
        },
      ],
    });
    for (const [version, magic] of [
      [0, 0],
      [2, 1],
    ] as const) {
      const response = await suite.client.call(ApiKey.FETCH, version, fetchBody('legacy', 0, 0));
      const data = response.responses[0].partitions[0];
      assert.equal(data.errorCode, ErrorCode.NONE);
      const set = decodeMessageSet(data.records);
      assert.ok(
        set.messages.every((m) => m.magic === magic),
        `fetch v${version} gives magic ${magic}`,
      );
      assert.deepEqual(
        set.messages.map((m) => [m.offset, m.value!.toString()]),
        [
          [0, 'm0'],
          [1, 'm0-gz-1'],
          [2, 'm0-gz-2'],
          [3, 'm1'],
          [4, 'v2-record'],
        ],
      );
    }
  });

  it('answers Fetch v0-v2 with nothing, not the whole batch, when a first batch is over the max bytes', async () => {
    // Fetch v0-v2 sizes are hard limits (Kafka's FetchParams.hardMaxBytesLimit, before KIP-74): the read is cut
    // at the partition's max bytes, and the down-conversion to magic 0/1 drops the cut batch, so Kafka 3.9 answers
    // an empty message set; Fetch v3+ gets the first batch whole.
    await createTopic(suite.client, 'legacy-large', { numPartitions: 1 });
    await suite.client.call(ApiKey.PRODUCE, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'legacy-large',
          partitionData: [{ index: 0, records: buildBatch([{ key: 'k', value: 'x'.repeat(2000) }]) }],
        },
      ],
    });
    for (const version of [0, 1, 2, 3]) {
      const partition = { ...fetchPartition(0, 0), partitionMaxBytes: 500 };
      // Kafka's DelayedFetch counts the bytes there are up to the partition's max bytes: the fetch is answered at
      // once, not after its max wait.
      const body = consumerFetchBody([{ topic: 'legacy-large', partitions: [partition] }], {
        maxWaitMs: 10_000,
      });
      const started = Date.now();
      const response = await suite.client.call(ApiKey.FETCH, version, body);
      assert.ok(Date.now() - started < 5000, `fetch v${version} answered at once`);
      const data = response.responses[0].partitions[0];
      assert.equal(data.errorCode, ErrorCode.NONE);
      assert.equal(data.highWatermark, 1n);
      const values = decodeMessageSet(data.records).messages.map((m) => m.value!.length);
      assert.deepEqual(values, version <= 2 ? [] : [2000], `fetch v${version}`);
    }
  });

  it('refuses a legacy message set on Produce v3 and later with INVALID_RECORD', async () => {
    const response = await suite.client.call(ApiKey.PRODUCE, 3, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'legacy',
          partitionData: [
            { index: 0, records: buildMessageSet([{ offset: 0, value: Buffer.from('x') }], { magic: 1 }) },
          ],
        },
      ],
    });
    assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.INVALID_RECORD);
  });

  it('takes several plain messages of one magic, but refuses two compressed wrappers or mixed magics', async () => {
    await createTopic(suite.client, 'legacy-shape', { numPartitions: 1 });
    const produce = async (records: Buffer): Promise<number> => {
      const response = await suite.client.call(ApiKey.PRODUCE, 2, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'legacy-shape', partitionData: [{ index: 0, records }] }],
      });
      return response.responses[0].partitionResponses[0].errorCode;
    };
    const message = (value: string, magic: 0 | 1, compression = 0): Buffer =>
      buildMessageSet([{ offset: 0, timestamp: 1_600_000_000_000, value: Buffer.from(value) }], {
        magic,
        compression,
      });
    // As Kafka's LogValidator: an uncompressed magic 0/1 message is one record, and several may come together;
    // a compressed wrapper must come alone, and every entry must have the first one's magic.
    const plain = Buffer.concat([message('p1', 1), message('p2', 1), message('p3', 1)]);
    assert.equal(await produce(plain), ErrorCode.NONE);
    const twoWrappers = Buffer.concat([message('w1', 1, 1), message('w2', 1, 1)]);
    assert.equal(await produce(twoWrappers), ErrorCode.INVALID_RECORD);
    assert.equal(
      await produce(Buffer.concat([message('m0', 0), message('m1', 1)])),
      ErrorCode.INVALID_RECORD,
    );
    const records = await readPartition(suite.client, 'legacy-shape', 0);
    assert.deepEqual(
      records.map((r) => r.value!.toString()),
      ['p1', 'p2', 'p3'],
    );
  });
});
