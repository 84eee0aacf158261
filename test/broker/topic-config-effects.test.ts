// Topic configs that change what Produce does, over the wire: max.message.bytes, message.timestamp.type
// (LogAppendTime), message.timestamp.before.max.ms, compression.type (recompression), min.insync.replicas (capped
// at the replicas assigned).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, fetchBody, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';

describe('topic configs applied by Produce', () => {
  let broker: BrokerProcess;
  let client: WireClient;

  const create = (name: string, configs: Record<string, string>) =>
    createTopic(client, name, { numPartitions: 1, replicationFactor: 1, configs });
  const produce = (topic: string, records: Buffer, acks = 1) => produceBatch(client, topic, records, acks);

  before(async () => {
    broker = await startBroker();
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  it('refuses a batch larger than max.message.bytes with MESSAGE_TOO_LARGE', async () => {
    await create('small-max', { 'max.message.bytes': '200' });
    const tooBig = await produce('small-max', buildBatch([{ value: 'x'.repeat(300) }]));
    assert.equal(tooBig.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    const fits = await produce('small-max', buildBatch([{ value: 'x'.repeat(20) }]));
    assert.equal(fits.errorCode, ErrorCode.NONE);
  });

  it('stamps LogAppendTime batches with the broker time and answers it in the produce response', async () => {
    await create('append-time', { 'message.timestamp.type': 'LogAppendTime' });
    const before = Date.now();
    const response = await produce('append-time', buildBatch([{ value: 'a', timestamp: 1000 }]));
    assert.equal(response.errorCode, ErrorCode.NONE);
    const appendTime = Number(response.logAppendTimeMs);
    assert.ok(appendTime >= before && appendTime <= Date.now(), 'log append time is the broker clock');
    const [record] = await readPartition(client, 'append-time', 0);
    assert.equal(record!.timestamp, appendTime, 'consumers see the append time, not the producer timestamp');
  });

  it('refuses CreateTime timestamps too far in the past with INVALID_TIMESTAMP', async () => {
    await create('recent-only', { 'message.timestamp.before.max.ms': '60000' });
    const old = await produce(
      'recent-only',
      buildBatch([{ value: 'old', timestamp: Date.now() - 3_600_000 }]),
    );
    assert.equal(old.errorCode, ErrorCode.INVALID_TIMESTAMP);
    const fresh = await produce('recent-only', buildBatch([{ value: 'now', timestamp: Date.now() }]));
    assert.equal(fresh.errorCode, ErrorCode.NONE);
  });

  it('recompresses batches to the topic compression.type and consumers read the same records', async () => {
    await create('always-gzip', { 'compression.type': 'gzip' });
    const sent = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `value-${i}`.repeat(5) }));
    assert.equal((await produce('always-gzip', buildBatch(sent))).errorCode, ErrorCode.NONE);
    const fetched = await client.call(ApiKey.FETCH, 12, fetchBody('always-gzip', 0, 0));
    const bytes: Buffer = fetched.responses[0].partitions[0].records;
    assert.equal(batchHeader.compression(bytes, 0), 1, 'stored batch is gzip');
    const records = await readPartition(client, 'always-gzip', 0);
    assert.deepEqual(
      records.map((r) => [r.key!.toString(), r.value!.toString()]),
      sent.map((m) => [m.key, m.value]),
    );
  });

  it('takes acks=all on one replica under min.insync.replicas 2: the minimum is capped at the replicas', async () => {
    // Kafka 3.7+ (KAFKA-15583) compares the ISR with min(min.insync.replicas, replicas assigned), so a single
    // broker with a production-style minimum of 2 takes the acks=all writes the Java producer sends by default.
    // The refusal when a replicated partition's ISR is short: test/cluster/min-insync-refusal.test.ts.
    await create('needs-two', { 'min.insync.replicas': '2' });
    const all = await produce('needs-two', buildBatch([{ value: 'all' }]), -1);
    assert.equal(all.errorCode, ErrorCode.NONE);
    const one = await produce('needs-two', buildBatch([{ value: 'one' }]), 1);
    assert.equal(one.errorCode, ErrorCode.NONE);
    const read = await readPartition(client, 'needs-two', 0);
    assert.deepEqual(
      read.map((r) => r.value?.toString()),
      ['all', 'one'],
      'both records are committed and read',
    );
  });
});
