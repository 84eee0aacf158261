// Produce requests that Kafka's KafkaApis and ReplicaManager refuse before anything reaches a log: a client's
// write to an internal topic (the coordinators own what is in them), transactional batches sent without a
// transactional id (no coordinator would ever end the transaction they open), batches whose records a client
// encoded wrongly (compressed or not: Kafka's LogValidator reads the records of every batch a client sends), a
// compressed payload that does not decompress (UNKNOWN_SERVER_ERROR, as Kafka's codecs answer it), a
// request whose shape Kafka refuses (a base offset other than 0, more than one batch for a partition), and a
// plain batch from a producer whose transaction is open in the partition. Each refusal leaves the log as it was,
// and carries no error message: Kafka 3.9's ReplicaManager sends an append's exception text only for the
// per-record errors of KIP-467 (LogAppendResult.errorMessage, hasCustomErrorMessage for RecordValidationException;
// test/broker/produce-record-errors.test.ts), never for a batch it refuses whole.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { writeBatchCrc } from '../../src/protocol/records/batch-crc.js';
import {
  BATCH_HEADER_BYTES,
  CompressionType,
  LAST_OFFSET_DELTA,
  RECORDS_COUNT,
} from '../../src/protocol/records/batch-header.js';
import { recompressBatch } from '../../src/protocol/records/recompress.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { callCoordinator, transactionCompleted } from '../helpers/txn-session.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';

const OFFSETS_TOPIC = '__consumer_offsets';

const CODECS = [
  ['gzip', CompressionType.Gzip],
  ['snappy', CompressionType.Snappy],
  ['lz4', CompressionType.Lz4],
  ['zstd', CompressionType.Zstd],
] as const;

/** An uncompressed batch whose first record's length varint (zigzag 63) runs past the record, CRC and all. */
function malformedRecordBatch(): Buffer {
  const batch = buildBatch([{ key: 'k', value: 'first' }, { value: 'second' }]);
  batch[BATCH_HEADER_BYTES] = 0x7e;
  writeBatchCrc(batch, 0);
  return batch;
}

describe('produce requests refused before the append', () => {
  const suite = useBrokerWithClient(
    { overrides: { 'offsets.topic.num.partitions': 1, 'transaction.state.log.replication.factor': 1 } },
    async (s) => {
      await createTopic(s.client, 'refusals', { numPartitions: 1 });
      // FindCoordinator creates __consumer_offsets; it answers NONE once its partition is led here.
      for (let attempt = 0; ; attempt++) {
        const r = await s.client.call(ApiKey.FIND_COORDINATOR, 3, { key: 'g', keyType: 0 });
        if (r.errorCode === ErrorCode.NONE) break;
        assert.ok(attempt < 100, `FindCoordinator still answers ${r.errorCode}`);
        await sleep(100);
      }
    },
  );

  /** The partition's log end offset, or with readCommitted its last stable offset (ListOffsets v7). */
  const endOffset = async (topic: string, readCommitted = false): Promise<bigint> => {
    const response = await suite.client.call(ApiKey.LIST_OFFSETS, 7, {
      replicaId: -1,
      isolationLevel: readCommitted ? 1 : 0,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    const partition = response.topics[0].partitions[0];
    assert.equal(partition.errorCode, ErrorCode.NONE);
    return partition.offset;
  };

  it("a client's produce to __consumer_offsets is INVALID_TOPIC_EXCEPTION and appends nothing", async () => {
    const before = await endOffset(OFFSETS_TOPIC);
    const response = await produceBatch(suite.client, OFFSETS_TOPIC, buildBatch([{ key: 'k', value: 'v' }]));
    assert.equal(response.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(response.baseOffset, -1n);
    assert.equal(await endOffset(OFFSETS_TOPIC), before, 'nothing reached the offsets log');
  });

  it('a partition of an internal topic that does not exist is still UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const response = await produceBatch(suite.client, OFFSETS_TOPIC, buildBatch([{ value: 'v' }]), -1, 7);
    assert.equal(response.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('the client id __admin_client may write to an internal topic, as in Kafka', async () => {
    const admin = await WireClient.connect(suite.broker.host, suite.broker.port, '__admin_client');
    try {
      const before = await endOffset(OFFSETS_TOPIC);
      // A tombstone for a key no group uses: the coordinator has nothing to make of it.
      const response = await produceBatch(admin, OFFSETS_TOPIC, buildBatch([{ key: 'k', value: null }]));
      assert.equal(response.errorCode, ErrorCode.NONE);
      assert.equal(response.baseOffset, before);
    } finally {
      admin.close();
    }
  });

  it('an uncompressed batch whose valid CRC covers a malformed record is INVALID_RECORD and appends nothing', async () => {
    const batch = malformedRecordBatch();
    const before = await endOffset('refusals');
    const response = await produceBatch(suite.client, 'refusals', batch);
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_RECORD, null]);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    // The partition still serves what follows.
    const good = await produceBatch(suite.client, 'refusals', buildBatch([{ value: 'good' }]));
    assert.deepEqual([good.errorCode, good.baseOffset], [ErrorCode.NONE, before]);
  });

  it('a transactional batch without a transactional id is refused, and opens no transaction', async () => {
    const init = await suite.client.call(ApiKey.INIT_PRODUCER_ID, 4, {
      transactionalId: null,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    assert.equal(init.errorCode, ErrorCode.NONE);
    const before = await endOffset('refusals');
    const batch = buildBatch([{ value: 'stray' }], {
      producerId: Number(init.producerId),
      producerEpoch: init.producerEpoch,
      baseSequence: 0,
      transactional: true,
    });
    const response = await produceBatch(suite.client, 'refusals', batch);
    assert.equal(response.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    // A plain record after it is readable by read_committed consumers: no transaction holds the stable offset.
    const plain = await produceBatch(suite.client, 'refusals', buildBatch([{ value: 'plain' }]));
    assert.equal(plain.errorCode, ErrorCode.NONE);
    assert.equal(await endOffset('refusals', true), plain.baseOffset + 1n);
  });

  for (const [name, codec] of CODECS) {
    it(`a ${name} batch whose valid CRC covers a malformed record is INVALID_RECORD and appends nothing`, async () => {
      // The compressed bytes are sound; the records inside are what the client got wrong.
      const batch = recompressBatch(malformedRecordBatch(), 0, codec);
      const before = await endOffset('refusals');
      const response = await produceBatch(suite.client, 'refusals', batch);
      assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_RECORD, null]);
      assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    });
  }

  for (const [name, codec] of CODECS) {
    it(`a ${name} batch whose payload does not decompress is UNKNOWN_SERVER_ERROR, as in Kafka, and appends nothing`, async () => {
      // The CRC is right, so the bytes arrived as the client wrote them: a retry (CORRUPT_MESSAGE is retriable)
      // would send the same payload again. Kafka's codecs answer it with a KafkaException, UNKNOWN_SERVER_ERROR.
      const batch = buildBatch([{ value: 'one' }, { value: 'two' }], { compression: codec });
      batch.fill(0x41, BATCH_HEADER_BYTES);
      writeBatchCrc(batch, 0);
      const before = await endOffset('refusals');
      const response = await produceBatch(suite.client, 'refusals', batch);
      assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.UNKNOWN_SERVER_ERROR, null]);
      assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    });
  }

  it('a compressed batch holding fewer records than its header counts is INVALID_RECORD', async () => {
    const short = buildBatch([{ value: 'one' }, { value: 'two' }]);
    // The header claims a third record (count and last offset delta agree with each other, not with the records).
    short.writeInt32BE(3, RECORDS_COUNT);
    short.writeInt32BE(2, LAST_OFFSET_DELTA);
    writeBatchCrc(short, 0);
    const before = await endOffset('refusals');
    const response = await produceBatch(
      suite.client,
      'refusals',
      recompressBatch(short, 0, CompressionType.Gzip),
    );
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_RECORD, null]);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
  });

  it('a 128 KiB batch with one byte changed anywhere is CORRUPT_MESSAGE, and the same batch intact is appended', async () => {
    // 128 records of 1 KiB: the CRC runs over long and short blocks and a tail (src/native/crc32c.c), so a byte
    // changed in the first, middle or last block, or in the last few bytes, must each be caught.
    const value = Buffer.alloc(1024, 0x61);
    const batch = buildBatch(Array.from({ length: 128 }, () => ({ value })));
    assert.ok(batch.length > 3 * 8192 * 5, `a batch of ${batch.length} bytes spans several long blocks`);
    for (const at of [BATCH_HEADER_BYTES, 30_000, 70_000, batch.length - 300, batch.length - 1]) {
      const corrupt = Buffer.from(batch);
      corrupt[at]! ^= 0x01;
      const before = await endOffset('refusals');
      const response = await produceBatch(suite.client, 'refusals', corrupt);
      assert.equal(response.errorCode, ErrorCode.CORRUPT_MESSAGE, `byte ${at} of ${batch.length}`);
      assert.equal(response.errorMessage, null);
      assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    }
    const before = await endOffset('refusals');
    const intact = await produceBatch(suite.client, 'refusals', batch);
    assert.equal(intact.errorCode, ErrorCode.NONE);
    assert.equal(await endOffset('refusals'), before + 128n);
  });

  it("a client's batch with a base offset other than 0 is INVALID_RECORD", async () => {
    const before = await endOffset('refusals');
    const response = await produceBatch(
      suite.client,
      'refusals',
      buildBatch([{ value: 'v' }], { baseOffset: 5 }),
    );
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_RECORD, null]);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
  });

  it('a batch above the topic’s max.message.bytes is MESSAGE_TOO_LARGE, without a message, as in Kafka', async () => {
    await createTopic(suite.client, 'refusals-small', {
      numPartitions: 1,
      configs: { 'max.message.bytes': '200' },
    });
    const response = await produceBatch(
      suite.client,
      'refusals-small',
      buildBatch([{ value: Buffer.alloc(300, 0x61) }]),
    );
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.MESSAGE_TOO_LARGE, null]);
  });

  it('two batches for one partition in one request are INVALID_RECORD, and neither is appended', async () => {
    const before = await endOffset('refusals');
    const two = Buffer.concat([buildBatch([{ value: 'a' }]), buildBatch([{ value: 'b' }])]);
    const response = await produceBatch(suite.client, 'refusals', two);
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_RECORD, null]);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
  });

  it('a plain batch from a producer whose transaction is open in the partition is INVALID_TXN_STATE', async () => {
    const tid = 'refusals-txn';
    const init = await callCoordinator(
      () => [suite.broker],
      1,
      tid,
      ApiKey.INIT_PRODUCER_ID,
      4,
      { transactionalId: tid, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 },
      (r) => r.errorCode,
      60_000,
    );
    assert.equal(init.errorCode, ErrorCode.NONE);
    const producer = { producerId: Number(init.producerId), producerEpoch: init.producerEpoch as number };
    const added = await suite.client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
      transactions: [],
      v3AndBelowTransactionalId: tid,
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: 'refusals', partitions: [0] }],
    });
    assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
    const produce = async (baseSequence: number, transactional: boolean) => {
      const records = buildBatch([{ value: `seq-${baseSequence}` }], {
        ...producer,
        baseSequence,
        transactional,
      });
      const r = await suite.client.call(ApiKey.PRODUCE, 9, {
        transactionalId: transactional ? tid : null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 'refusals', partitionData: [{ index: 0, records }] }],
      });
      return r.responses[0].partitionResponses[0];
    };
    assert.equal((await produce(0, true)).errorCode, ErrorCode.NONE);
    const before = await endOffset('refusals');
    // The next sequence and the same epoch: only the missing transactional flag is wrong.
    const plain = await produce(1, false);
    assert.deepEqual([plain.errorCode, plain.errorMessage], [ErrorCode.INVALID_TXN_STATE, null]);
    assert.equal(await endOffset('refusals'), before, 'nothing was appended');
    // Once the transaction has ended in the partition, the same producer may write outside one.
    const ended = await suite.client.call(ApiKey.END_TXN, 3, {
      transactionalId: tid,
      producerId: init.producerId,
      producerEpoch: init.producerEpoch,
      committed: true,
    });
    assert.equal(ended.errorCode, ErrorCode.NONE);
    await transactionCompleted(() => [suite.broker], tid, true);
    assert.equal((await produce(1, false)).errorCode, ErrorCode.NONE);
  });
});
