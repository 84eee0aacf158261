// Invalid records in a produced batch are answered as Kafka's LogValidator does (KIP-467): the partition gets
// INVALID_RECORD or INVALID_TIMESTAMP with a summary error_message, and record_errors names each bad record by
// its index in its batch. Nothing of the batch is appended.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { CompressionType } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { createTopic, produceBatch } from '../helpers/wire-client.js';

const HOUR_MS = 3_600_000;

describe('produce record errors (KIP-467)', () => {
  const suite = useBrokerWithClient({}, async (suite) => {
    await createTopic(suite.client, 'compacted', {
      numPartitions: 1,
      configs: { 'cleanup.policy': 'compact' },
    });
    await createTopic(suite.client, 'recent', {
      numPartitions: 1,
      configs: { 'message.timestamp.before.max.ms': String(HOUR_MS) },
    });
  });

  const endOffset = async (topic: string): Promise<bigint> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    return response.topics[0].partitions[0].offset;
  };

  for (const compression of [CompressionType.None, CompressionType.Gzip]) {
    it(`a keyless record on a compacted topic is INVALID_RECORD with its batch index (codec ${compression})`, async () => {
      const batch = buildBatch(
        [
          { key: 'a', value: '0' },
          { key: null, value: '1' },
          { key: 'c', value: '2' },
          { key: null, value: '3' },
        ],
        { compression },
      );
      const response = await produceBatch(suite.client, 'compacted', batch);
      assert.equal(response.errorCode, ErrorCode.INVALID_RECORD);
      assert.deepEqual(
        response.recordErrors.map((e: { batchIndex: number }) => e.batchIndex),
        [1, 3],
      );
      assert.equal(
        response.recordErrors[0].batchIndexErrorMessage,
        'Compacted topic cannot accept message without key in topic partition compacted-0',
      );
      assert.match(
        response.errorMessage,
        /^One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: \[RecordError\(batchIndex=1, message='Compacted topic cannot accept message without key in topic partition compacted-0'\), RecordError\(batchIndex=3, /,
      );
      assert.equal(await endOffset('compacted'), 0n);
    });
  }

  it('a record older than message.timestamp.before.max.ms is INVALID_TIMESTAMP with its index, even when not first', async () => {
    const now = Date.now();
    // The header's base timestamp is the first record's, which is fine: only reading the records finds index 2.
    const batch = buildBatch([
      { value: '0', timestamp: now },
      { value: '1', timestamp: now - 1000 },
      { value: '2', timestamp: now - 2 * HOUR_MS },
    ]);
    const response = await produceBatch(suite.client, 'recent', batch);
    assert.equal(response.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.equal(response.errorMessage, 'One or more records have been rejected due to invalid timestamp');
    assert.equal(response.recordErrors.length, 1);
    assert.equal(response.recordErrors[0].batchIndex, 2);
    assert.match(
      response.recordErrors[0].batchIndexErrorMessage,
      new RegExp(
        `^Timestamp ${now - 2 * HOUR_MS} of message with offset 2 is out of range\\. The timestamp should be within \\[\\d+, \\d+\\]$`,
      ),
    );
    assert.equal(await endOffset('recent'), 0n);
  });

  it('valid records are still appended and answered without record errors', async () => {
    const response = await produceBatch(
      suite.client,
      'compacted',
      buildBatch([
        { key: 'a', value: '0' },
        { key: 'b', value: '1' },
      ]),
    );
    assert.equal(response.errorCode, ErrorCode.NONE);
    assert.deepEqual(response.recordErrors, []);
    assert.equal(response.errorMessage, null);
  });
});
