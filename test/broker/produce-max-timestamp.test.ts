// A produced batch whose header's maxTimestamp is not its records' largest (Sarama 1.22 sends -1 in every batch; a
// wrong encoder may write anything) is stored with the largest record timestamp in its header, as Kafka's
// LogValidator does, so that ListOffsets by time finds its records and retention.ms ages it by them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { isBatchCrcValid, writeBatchCrc } from '../../src/protocol/records/batch-crc.js';
import { batchHeader, CompressionType, MAX_TIMESTAMP } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, fetchBody } from '../helpers/wire-client.js';

const BASE_MS = 1_700_000_000_000;

/** A batch of records one second apart whose header carries `maxTimestamp` (-1 by default), the CRC made to match. */
function batchWithoutMaxTimestamp(
  first: number,
  count: number,
  compression: number,
  maxTimestamp = -1,
): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    value: `r${first + i}`,
    timestamp: BASE_MS + (first + i) * 1000,
  }));
  const batch = buildBatch(records, { compression });
  batch.writeBigInt64BE(BigInt(maxTimestamp), MAX_TIMESTAMP);
  writeBatchCrc(batch, 0);
  return batch;
}

/** The max timestamp in the header of each batch of `bytes`. */
function maxima(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let pos = 0; pos < bytes.length; pos += batchHeader.sizeInBytes(bytes, pos)) {
    out.push(batchHeader.maxTimestamp(bytes, pos));
  }
  return out;
}

describe('produce with a max timestamp of -1 in the batch header', () => {
  const suite = useBrokerWithClient({}, (suite) => createTopic(suite.client, 'no-max', { numPartitions: 1 }));

  const offsetAt = async (timestamp: number): Promise<bigint> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 1, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'no-max',
          partitions: [
            { partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 },
          ],
        },
      ],
      timeoutMs: 1000,
    });
    const partition = response.topics[0].partitions[0];
    assert.equal(partition.errorCode, ErrorCode.NONE);
    return partition.offset;
  };

  it('stores the largest record timestamp as the max and finds records by time (plain and gzip)', async () => {
    // Records 0 and 1 in a plain batch, 2..4 in a gzip one (the max is read through decompression).
    const batches = [
      batchWithoutMaxTimestamp(0, 2, CompressionType.None),
      batchWithoutMaxTimestamp(2, 3, CompressionType.Gzip),
    ];
    for (const batch of batches) {
      const response = await suite.client.call(ApiKey.PRODUCE, 3, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 'no-max', partitionData: [{ index: 0, records: batch }] }],
      });
      assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    }

    const fetched = await suite.client.call(ApiKey.FETCH, 12, fetchBody('no-max', 0, 0));
    assert.deepEqual(maxima(fetched.responses[0].partitions[0].records), [BASE_MS + 1000, BASE_MS + 4000]);

    assert.equal(await offsetAt(BASE_MS), 0n);
    assert.equal(await offsetAt(BASE_MS + 500), 1n);
    assert.equal(await offsetAt(BASE_MS + 1000), 1n);
    assert.equal(await offsetAt(BASE_MS + 2500), 3n);
    assert.equal(await offsetAt(BASE_MS + 4000), 4n);
    assert.equal(await offsetAt(BASE_MS + 4001), -1n);
  });

  it('sets a max timestamp beyond or within the records to their largest, plain and compressed', async () => {
    await createTopic(suite.client, 'wrong-max', { numPartitions: 1 });
    // Records 0..2 (plain) claiming a max a day later; records 3..5 (lz4) claiming the second record's time.
    const batches = [
      batchWithoutMaxTimestamp(0, 3, CompressionType.None, BASE_MS + 86_400_000),
      batchWithoutMaxTimestamp(3, 3, CompressionType.Lz4, BASE_MS + 4000),
    ];
    for (const batch of batches) {
      const response = await suite.client.call(ApiKey.PRODUCE, 8, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 'wrong-max', partitionData: [{ index: 0, records: batch }] }],
      });
      assert.equal(response.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    }
    const fetched = await suite.client.call(ApiKey.FETCH, 12, fetchBody('wrong-max', 0, 0));
    const bytes: Buffer = fetched.responses[0].partitions[0].records;
    assert.deepEqual(maxima(bytes), [BASE_MS + 2000, BASE_MS + 5000]);
    // The rewritten headers' CRCs match (a consumer checks them).
    for (let pos = 0; pos < bytes.length; pos += batchHeader.sizeInBytes(bytes, pos)) {
      assert.ok(isBatchCrcValid(bytes, pos), `CRC of the batch at ${pos}`);
    }
  });
});
