// A broker stopped cleanly writes a producer snapshot only for partitions whose log moved since the last one
// (Kafka's rule, src/storage/log.ts close): idle partitions leave no .snapshot file, and a partition an
// idempotent producer wrote to keeps its producer state across the restart (a duplicate answered with its
// original offset, the next sequence accepted, a gap refused).

import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { WireClient } from '../helpers/wire-client.js';

const IDLE_PARTITIONS = 100;

function produceRequest(topic: string, records: Buffer) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  };
}

function createTopic(name: string, numPartitions: number) {
  return {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 60_000,
    validateOnly: false,
  };
}

/** The `.snapshot` files of the partition directories of `topic`, as `dir/name`. */
function snapshots(dataDir: string, topic: string): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(dataDir)) {
    if (!new RegExp(`^${topic}-\\d+$`).test(dir)) continue;
    for (const name of readdirSync(join(dataDir, dir)))
      if (name.endsWith('.snapshot')) out.push(`${dir}/${name}`);
  }
  return out.sort();
}

describe('producer snapshots at a clean broker shutdown', { timeout: 120_000 }, () => {
  let broker: BrokerProcess | undefined;
  let client: WireClient | undefined;
  let dataDir: string | undefined;

  after(async () => {
    client?.close();
    await broker?.stop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${IDLE_PARTITIONS} idle partitions write none; an idempotent producer's partition keeps its state`, async () => {
    broker = await startBroker({ keepDataDir: true });
    dataDir = broker.dataDir;
    const first = await WireClient.connect(broker.host, broker.port);
    client = first;
    for (const [topic, n] of [
      ['idle', IDLE_PARTITIONS],
      ['idem', 1],
    ] as const) {
      const created = await first.call(ApiKey.CREATE_TOPICS, 5, createTopic(topic, n));
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    }
    const init = await first.call(ApiKey.INIT_PRODUCER_ID, 4, {
      transactionalId: null,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    assert.equal(init.errorCode, ErrorCode.NONE);
    const producerId = Number(init.producerId);
    const batch = (seq: number) =>
      buildBatch([{ value: `s${seq}` }], { producerId, producerEpoch: 0, baseSequence: seq });
    const offsets: bigint[] = [];
    for (let seq = 0; seq < 3; seq++) {
      const sent = await first.call(ApiKey.PRODUCE, 9, produceRequest('idem', batch(seq)));
      assert.equal(sent.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      offsets.push(BigInt(sent.responses[0].partitionResponses[0].baseOffset));
    }
    first.close();
    client = undefined;
    assert.equal(await broker.stop(), 0, 'a clean exit');
    assert.ok(existsSync(join(dataDir, '.kafka_cleanshutdown')));
    assert.deepEqual(snapshots(dataDir, 'idle'), [], 'fails before: one empty snapshot per idle partition');
    assert.deepEqual(snapshots(dataDir, 'idem'), [`idem-0/${String(3).padStart(20, '0')}.snapshot`]);

    broker = await startBroker({ dataDir, keepDataDir: true });
    const second = await WireClient.connect(broker.host, broker.port);
    client = second;
    const again = await second.call(ApiKey.PRODUCE, 9, produceRequest('idem', batch(2)));
    assert.equal(again.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(BigInt(again.responses[0].partitionResponses[0].baseOffset), offsets[2], 'a duplicate');
    const next = await second.call(ApiKey.PRODUCE, 9, produceRequest('idem', batch(3)));
    assert.equal(next.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(BigInt(next.responses[0].partitionResponses[0].baseOffset), 3n);
    const gap = await second.call(ApiKey.PRODUCE, 9, produceRequest('idem', batch(6)));
    assert.equal(gap.responses[0].partitionResponses[0].errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  });
});
