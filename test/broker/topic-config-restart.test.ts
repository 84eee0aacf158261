// A topic's config overrides reach its logs after a restart: read at start and again for the controller's first
// LeaderAndIsr, as Kafka's LogManager opens every log with its topic's overrides (topic-config-startup.test.ts
// checks the window before that request). Before the first fix the logs kept the broker's defaults until the
// topic's config was next altered: segment.bytes was ignored, a compacted topic was no longer compacted, and a topic
// kept forever (retention.ms=-1) lost its records older than the broker's 7 days at the first retention check.

import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { createTopic, produceBatch, readPartition, WireClient } from '../helpers/wire-client.js';

const TOPIC = 'restarted-table';

describe('topic configs after a restart', () => {
  const overrides = { 'log.cleaner.backoff.ms': 100 };
  let broker: BrokerProcess | undefined;
  let client: WireClient | undefined;
  after(async () => {
    client?.close();
    await broker?.stop();
    if (broker) rmSync(broker.dataDir, { recursive: true, force: true });
  });

  it('segment.bytes and cleanup.policy=compact apply to a log loaded at start', async () => {
    broker = await startBroker({ overrides, keepDataDir: true });
    client = await WireClient.connect(broker.host, broker.port);
    await createTopic(client, TOPIC, {
      numPartitions: 1,
      replicationFactor: 1,
      configs: { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'min.cleanable.dirty.ratio': '0.01' },
    });
    const produce = async (key: string, value: string) => {
      const r = await produceBatch(client!, TOPIC, buildBatch([{ key, value: value.padEnd(300, '.') }]));
      assert.equal(r.errorCode, ErrorCode.NONE);
    };
    await produce('k', 'first');
    client.close();
    await broker.stop();
    broker = await startBroker({ overrides, keepDataDir: true, dataDir: broker.dataDir });
    client = await WireClient.connect(broker.host, broker.port);
    await produce('k', 'second');
    for (let i = 0; i < 6; i++) await produce(`other-${i}`, 'filler');
    const segments = readdirSync(join(broker.dataDir, `${TOPIC}-0`)).filter((n) => n.endsWith('.log'));
    assert.ok(segments.length >= 3, `segment.bytes=1024 rolls segments of three batches: ${segments}`);
    const deadline = Date.now() + 10_000;
    let values: string[] = [];
    do {
      values = (await readPartition(client, TOPIC, 0)).map(
        (r) => `${r.key}=${r.value?.toString().split('.')[0]}`,
      );
      if (!values.includes('k=first')) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    assert.equal(values[0], 'k=second', `the overwritten value is compacted away: ${values}`);
  });

  it('retention.ms=-1 keeps old records across a restart', async () => {
    // Before the fix the log came back on the broker's 7-day retention.ms: the first retention check after the
    // restart deleted these 30-day-old records (the fetch from 0 was answered OFFSET_OUT_OF_RANGE).
    const dataOverrides = { 'log.retention.check.interval.ms': 1 };
    const restarted = await startBroker({ overrides: dataOverrides, keepDataDir: true });
    let own = await WireClient.connect(restarted.host, restarted.port);
    let current = restarted;
    try {
      await createTopic(own, 'kept-forever', {
        numPartitions: 1,
        replicationFactor: 1,
        configs: { 'retention.ms': '-1', 'segment.bytes': '1024' },
      });
      const old = Date.now() - 30 * 86_400_000;
      for (let i = 0; i < 8; i++) {
        const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
        const r = await produceBatch(own, 'kept-forever', buildBatch([record]));
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
      own.close();
      await current.stop();
      current = await startBroker({ overrides: dataOverrides, keepDataDir: true, dataDir: current.dataDir });
      own = await WireClient.connect(current.host, current.port);
      // Retention checks every millisecond: a second is a thousand of them.
      await new Promise((r) => setTimeout(r, 1000));
      const offsets = (await readPartition(own, 'kept-forever', 0)).map((r) => r.offset);
      assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5, 6, 7]);
    } finally {
      own.close();
      await current.stop();
      rmSync(current.dataDir, { recursive: true, force: true });
    }
  });
});
