// Fetches answered from the tail cache (brook.log.tail.cache.bytes) against real broker processes: the same
// produce requests go to a broker with the cache and to one without it, and every fetch must get the same
// bytes and offsets from both, at every offset and size bound, after DeleteRecords too; a read_committed fetch
// never sees an open transaction's batches.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readRecords } from '../../src/protocol/records/batch-records.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { fetchBody, WireClient } from '../helpers/wire-client.js';

const { Kafka, logLevel } = kafkajs;

function createTopic(name: string) {
  return {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
    validateOnly: false,
  };
}

function produce(topic: string, records: Buffer) {
  return {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  };
}

function fetchAt(topic: string, offset: number, partitionMaxBytes: number, isolationLevel = 0) {
  const body = fetchBody(topic, 0, offset);
  body.isolationLevel = isolationLevel;
  body.topics[0]!.partitions[0]!.partitionMaxBytes = partitionMaxBytes;
  return body;
}

interface Answer {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  records: string;
}

async function fetchOne(
  client: WireClient,
  topic: string,
  offset: number,
  maxBytes: number,
): Promise<Answer> {
  const response = await client.call(ApiKey.FETCH, 12, fetchAt(topic, offset, maxBytes));
  const p = response.responses[0].partitions[0];
  return {
    errorCode: p.errorCode,
    highWatermark: p.highWatermark,
    lastStableOffset: p.lastStableOffset,
    logStartOffset: p.logStartOffset,
    records: (p.records ?? Buffer.alloc(0)).toString('hex'),
  };
}

describe('fetches from the tail cache, over the wire', () => {
  let cached: BrokerProcess;
  let uncached: BrokerProcess;
  let a: WireClient;
  let b: WireClient;
  before(async () => {
    [cached, uncached] = await Promise.all([
      startBroker(),
      startBroker({ overrides: { 'brook.log.tail.cache.bytes': 0 } }),
    ]);
    a = await WireClient.connect(cached.host, cached.port);
    b = await WireClient.connect(uncached.host, uncached.port);
  });
  after(async () => {
    a?.close();
    b?.close();
    await Promise.all([cached?.stop(), uncached?.stop()]);
  });

  it('answers every offset and size bound with the bytes a broker without the cache answers', async () => {
    for (const c of [a, b]) {
      assert.equal((await c.call(ApiKey.CREATE_TOPICS, 5, createTopic('tail'))).topics[0].errorCode, 0);
    }
    let offset = 0;
    for (let i = 0; i < 30; i++) {
      const count = 1 + (i % 4);
      const batch = buildBatch(
        Array.from({ length: count }, (_, j) => ({ value: Buffer.alloc(100 + 37 * ((i + j) % 9), i) })),
        { timestamp: 1_700_000_000_000 + i },
      );
      for (const c of [a, b]) {
        const r = await c.call(ApiKey.PRODUCE, 9, produce('tail', batch));
        assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
        assert.equal(r.responses[0].partitionResponses[0].baseOffset, BigInt(offset));
      }
      offset += count;
    }
    let withRecords = 0;
    for (let at = 0; at <= offset; at++) {
      for (const maxBytes of [1, 400, 2000, 1 << 20]) {
        const [x, y] = await Promise.all([
          fetchOne(a, 'tail', at, maxBytes),
          fetchOne(b, 'tail', at, maxBytes),
        ]);
        assert.deepEqual(x, y, `fetch at ${at}, partition max bytes ${maxBytes}`);
        if (x.records.length > 0) withRecords++;
      }
    }
    assert.ok(withRecords > 100, `${withRecords} fetches returned records`);
    // The first record of a fetch in the middle of a batch is in that batch (the batch comes whole).
    const mid = await a.call(ApiKey.FETCH, 12, fetchAt('tail', 5, 1 << 20));
    const records = readRecords(mid.responses[0].partitions[0].records, 0);
    assert.ok(records[0]!.offset <= 5 && records.at(-1)!.offset >= 5);

    for (const c of [a, b]) {
      const deleted = await c.call(ApiKey.DELETE_RECORDS, 2, {
        topics: [{ name: 'tail', partitions: [{ partitionIndex: 0, offset: 40n }] }],
        timeoutMs: 5000,
      });
      assert.equal(deleted.topics[0].partitions[0].errorCode, ErrorCode.NONE);
    }
    for (const at of [0, 39, 40, 41, 60, offset - 1, offset]) {
      const [x, y] = await Promise.all([fetchOne(a, 'tail', at, 1 << 20), fetchOne(b, 'tail', at, 1 << 20)]);
      assert.deepEqual(x, y, `after DeleteRecords, fetch at ${at}`);
      if (at < 40) assert.equal(x.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    }
  });

  it('read_committed: an open transaction is not served; once committed it is', async () => {
    const kafka = new Kafka({
      clientId: 'tail-txn',
      brokers: [cached.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100 },
    });
    assert.equal((await a.call(ApiKey.CREATE_TOPICS, 5, createTopic('tail-txn'))).topics[0].errorCode, 0);
    const plain = buildBatch([{ value: 'before' }, { value: 'before-2' }]);
    await a.call(ApiKey.PRODUCE, 9, produce('tail-txn', plain));
    const producer = kafka.producer({
      transactionalId: 'tail-tid',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({
        topic: 'tail-txn',
        messages: [
          { partition: 0, value: 'open-1' },
          { partition: 0, value: 'open-2' },
        ],
      });
      const values = async (isolationLevel: number) => {
        const response = await a.call(ApiKey.FETCH, 12, fetchAt('tail-txn', 0, 1 << 20, isolationLevel));
        const p = response.responses[0].partitions[0];
        const out: string[] = [];
        for (let pos = 0; pos < p.records.length; pos += 12 + p.records.readInt32BE(pos + 8)) {
          for (const r of readRecords(p.records, pos)) out.push(r.value?.toString() ?? '');
        }
        return { lso: Number(p.lastStableOffset), values: out };
      };
      const open = await values(1);
      assert.equal(open.lso, 2);
      assert.deepEqual(open.values, ['before', 'before-2']);
      assert.deepEqual((await values(0)).values, ['before', 'before-2', 'open-1', 'open-2']);
      await txn.commit();
      // The commit marker is written after EndTxn is answered (as in Kafka): wait for it.
      let done = await values(1);
      for (let i = 0; i < 100 && done.lso < 5; i++) {
        await new Promise((r) => setTimeout(r, 50));
        done = await values(1);
      }
      assert.ok(done.lso >= 5, `last stable offset ${done.lso} past the commit marker`);
      assert.deepEqual(done.values.slice(0, 4), ['before', 'before-2', 'open-1', 'open-2']);
    } finally {
      await producer.disconnect();
    }
  });
});
