// Topic defaults changed at runtime over the wire: an IncrementalAlterConfigs on the cluster-default broker
// resource ('') or on this broker's id changes what an existing topic without overrides does, without a restart
// (DynamicConfig re-reads the broker layers and refreshes every hosted partition's settings and log config).
// One key group a test, each observed through its behaviour: log.segment.bytes (a smaller segment size rolls),
// log.roll.ms (an old active segment rolls), log.retention.ms / log.retention.bytes (old segments deleted, the log
// start moves), log.cleanup.policy (compaction starts), message.max.bytes (MESSAGE_TOO_LARGE), compression.type
// (stored batches recompressed), log.message.timestamp.type (LogAppendTime). Each test removes its dynamic value
// again (a DELETE operation), so the next starts from the static defaults. min.insync.replicas has no effect on
// this broker's one-replica topics (the minimum is capped at the replicas assigned, as in Kafka 3.7+): its cluster
// default is observed on a replicated partition in test/cluster/min-insync-refusal.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { batchHeader } from '../../src/protocol/records/batch-header.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { waitFor } from '../helpers/cluster.js';
import { CLUSTER_DEFAULT, withDynamicConfigs } from '../helpers/dynamic-configs.js';
import { createTopic, fetchBody, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { scrape } from '../metrics/scrape.js';

const THIS_BROKER = '0';
const HOUR_MS = 3_600_000;

describe('topic defaults changed on a running broker', () => {
  let broker: BrokerProcess;
  let client: WireClient;
  let metricsPort: number;

  before(async () => {
    metricsPort = await freePort();
    broker = await startBroker({
      overrides: {
        'broker.id': 0,
        'brook.metrics.listener': `http://127.0.0.1:${metricsPort}`,
        // Retention and the cleaner look often, so that a change shows within a second or two.
        'log.retention.check.interval.ms': 300,
        'log.cleaner.backoff.ms': 100,
      },
    });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
  });

  const create = (name: string, configs: Record<string, string> = {}) =>
    createTopic(client, name, { numPartitions: 1, replicationFactor: 1, configs });
  // biome-ignore lint/suspicious/noExplicitAny: as produceBatch().
  const produce = (topic: string, records: Buffer, acks = 1): Promise<any> =>
    produceBatch(client, topic, records, acks);

  const withDynamic = (resourceName: string, configs: Record<string, string>, body: () => Promise<void>) =>
    withDynamicConfigs(client, resourceName, configs, body);

  async function logMetric(name: string, topic: string): Promise<number> {
    return (await scrape(metricsPort)).value(`kafka_log_log_${name}`, { topic, partition: 0 });
  }

  /** `count` single-record batches of about `bytes` bytes each; answers the last base offset. */
  async function fill(topic: string, count: number, bytes: number, timestamp?: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const response = await produce(
        topic,
        buildBatch([{ key: `k${i}`, value: 'v'.repeat(bytes), timestamp }]),
      );
      assert.equal(response.errorCode, ErrorCode.NONE);
    }
  }

  it('log.segment.bytes on the broker id: the active segment rolls at the new size', async () => {
    await create('seg');
    await fill('seg', 6, 300);
    assert.equal(await logMetric('numlogsegments', 'seg'), 1, 'one segment under the 1 GiB default');
    await withDynamic(THIS_BROKER, { 'log.segment.bytes': '1024' }, async () => {
      await fill('seg', 6, 300);
      const segments = await logMetric('numlogsegments', 'seg');
      assert.ok(segments >= 3, `segments of at most 1 KiB after the change (${segments})`);
    });
  });

  it('log.roll.ms on the cluster default: an active segment older than it rolls', async () => {
    await create('rolled');
    await fill('rolled', 1, 50);
    assert.equal(await logMetric('numlogsegments', 'rolled'), 1);
    await withDynamic(CLUSTER_DEFAULT, { 'log.roll.ms': '500' }, async () => {
      // The roll is decided at an append: write until one finds the active segment old enough.
      await waitFor(
        'a time-based roll',
        async () => {
          await fill('rolled', 1, 50);
          return (await logMetric('numlogsegments', 'rolled')) >= 2 ? true : undefined;
        },
        30_000,
      );
    });
  });

  it('log.retention.ms on the cluster default: segments older than it are deleted', async () => {
    await create('aged', { 'segment.bytes': '1024' });
    await fill('aged', 12, 300, Date.now() - HOUR_MS);
    await fill('aged', 1, 10);
    const segments = await logMetric('numlogsegments', 'aged');
    assert.ok(segments >= 3);
    assert.equal(await logMetric('logstartoffset', 'aged'), 0, 'kept under the 7-day default');
    await withDynamic(CLUSTER_DEFAULT, { 'log.retention.ms': String(10 * 60_000) }, async () => {
      await waitFor(
        'the hour-old segments deleted',
        async () => ((await logMetric('logstartoffset', 'aged')) > 0 ? true : undefined),
        30_000,
      );
      // The segment with the fresh record stays (its largest timestamp is now).
      assert.ok((await logMetric('numlogsegments', 'aged')) < segments);
      const left = await readPartition(client, 'aged', 0, await logMetric('logstartoffset', 'aged'));
      assert.equal(left.at(-1)?.offset, 12, 'the fresh record is kept');
    });
  });

  it('log.retention.bytes on the broker id: the oldest segments past it are deleted', async () => {
    await create('sized', { 'segment.bytes': '1024' });
    await fill('sized', 12, 300);
    const segments = await logMetric('numlogsegments', 'sized');
    assert.ok(segments >= 3);
    assert.equal(await logMetric('logstartoffset', 'sized'), 0, 'kept without a size limit');
    await withDynamic(THIS_BROKER, { 'log.retention.bytes': '1024' }, async () => {
      await waitFor(
        'segments past 1 KiB deleted',
        async () => ((await logMetric('logstartoffset', 'sized')) > 0 ? true : undefined),
        30_000,
      );
      assert.ok((await logMetric('numlogsegments', 'sized')) < segments);
    });
  });

  it('log.cleanup.policy=compact on the broker id: the cleaner compacts a topic without overrides', async () => {
    await create('table', { 'segment.bytes': '1024', 'min.cleanable.dirty.ratio': '0.01' });
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 5; k++) {
        const r = await produce(
          'table',
          buildBatch([{ key: `key-${k}`, value: `${round}`.padEnd(150, 'x') }]),
        );
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
    }
    // Unique keys after the data, so that all of it leaves the active segment (which is never cleaned).
    await fill('table', 8, 150);
    const produced = 4 * 5 + 8;
    assert.equal((await readPartition(client, 'table', 0)).length, produced, 'nothing removed under delete');
    await withDynamic(THIS_BROKER, { 'log.cleanup.policy': 'compact' }, async () => {
      await waitFor(
        'older values of the five keys compacted away',
        async () => {
          const records = await readPartition(client, 'table', 0);
          const keyed = records.filter((r) => r.key?.toString().startsWith('key-'));
          return keyed.length === 5 ? true : undefined;
        },
        30_000,
      );
    });
  });

  it('message.max.bytes on the cluster default: a larger batch is refused with MESSAGE_TOO_LARGE', async () => {
    await create('capped');
    const large = buildBatch([{ value: 'x'.repeat(300) }]);
    assert.equal((await produce('capped', large)).errorCode, ErrorCode.NONE);
    await withDynamic(CLUSTER_DEFAULT, { 'message.max.bytes': '200' }, async () => {
      assert.equal((await produce('capped', large)).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
      const small = buildBatch([{ value: 'x'.repeat(20) }]);
      assert.equal((await produce('capped', small)).errorCode, ErrorCode.NONE);
    });
  });

  it('compression.type on the broker id: later batches are stored recompressed', async () => {
    await create('packed');
    const records = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `value-${i}`.repeat(5) }));
    const storedCompression = async (offset: number): Promise<number> => {
      const fetched = await client.call(ApiKey.FETCH, 12, fetchBody('packed', 0, offset));
      return batchHeader.compression(fetched.responses[0].partitions[0].records, 0);
    };
    const first = await produce('packed', buildBatch(records));
    assert.equal(first.errorCode, ErrorCode.NONE);
    assert.equal(await storedCompression(Number(first.baseOffset)), 0, "the producer's (none) kept");
    await withDynamic(THIS_BROKER, { 'compression.type': 'gzip' }, async () => {
      const second = await produce('packed', buildBatch(records));
      assert.equal(second.errorCode, ErrorCode.NONE);
      assert.equal(await storedCompression(Number(second.baseOffset)), 1, 'stored as gzip');
    });
    const read = await readPartition(client, 'packed', 0);
    assert.deepEqual(
      read.map((r) => r.value?.toString()),
      [...records, ...records].map((r) => r.value),
    );
  });

  it('log.message.timestamp.type=LogAppendTime on the cluster default: the broker stamps batches', async () => {
    await create('stamped');
    // A recent create time: a record of 1970 is past the default 7-day retention, and the checker (every 300 ms
    // here) may delete it before it is read back, as Kafka would.
    const createTime = Date.now() - 60_000;
    const created = await produce('stamped', buildBatch([{ value: 'a', timestamp: createTime }]));
    assert.equal(created.errorCode, ErrorCode.NONE);
    assert.equal(Number(created.logAppendTimeMs), -1, 'CreateTime: no append time answered');
    await withDynamic(CLUSTER_DEFAULT, { 'log.message.timestamp.type': 'LogAppendTime' }, async () => {
      const before = Date.now();
      const stamped = await produce('stamped', buildBatch([{ value: 'b', timestamp: createTime }]));
      assert.equal(stamped.errorCode, ErrorCode.NONE);
      const appendTime = Number(stamped.logAppendTimeMs);
      assert.ok(appendTime >= before && appendTime <= Date.now(), 'the broker clock');
      const records = await readPartition(client, 'stamped', 0);
      assert.deepEqual(
        records.map((r) => r.timestamp),
        [createTime, appendTime],
      );
    });
  });
});
