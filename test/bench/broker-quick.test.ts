// Generator G1 and the fetch consumer against a real broker process, with a load small enough for a test: G1
// must get every record it sent acknowledged, at offsets that start at 0 and follow each other per partition,
// and a consumer must read back exactly those records.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { type BrokerProcess, startBroker } from '../../bench/broker/broker-process.js';
import { checkApiVersions, createTopic, waitForTopic } from '../../bench/broker/broker-setup.js';
import { FetchConsumer } from '../../bench/broker/fetch-consumer.js';
import { runG1 } from '../../bench/broker/g1-producer.js';
import { WireConnection } from '../../bench/broker/wire-connection.js';
import { withTempDir } from '../../bench/harness/temp-dir.js';

describe('broker bench, quick', { timeout: 20_000 }, () => {
  let broker: BrokerProcess;
  let release: () => void = () => {};
  let finished: Promise<unknown> = Promise.resolve();

  before(async () => {
    // The data directory lives as long as the broker: withTempDir removes it once `release` is called.
    broker = await new Promise<BrokerProcess>((resolve, reject) => {
      finished = withTempDir(tmpdir(), 'brook-bench-test-', async (dataDir) => {
        const started = await startBroker({ dataDir });
        resolve(started);
        await new Promise<void>((r) => {
          release = r;
        });
        await started.stop();
      }).catch(reject);
    });
  });

  after(async () => {
    release();
    await finished;
  });

  it('G1 gets every record acknowledged with contiguous offsets per partition, and a consumer reads them all', async () => {
    const topic = 'quick';
    const partitions = 2;
    const setup = await WireConnection.connect('127.0.0.1', broker.port);
    try {
      await checkApiVersions(setup, ['apiVersions', 'metadata', 'createTopics', 'produce', 'fetch']);
      await createTopic(setup, topic, partitions);
      await waitForTopic(setup, topic, partitions);
    } finally {
      setup.close();
    }
    const result = await runG1({
      host: '127.0.0.1',
      port: broker.port,
      topic,
      partitions,
      recordBytes: 100,
      batchBytes: 16 * 1024,
      partitionsPerRequest: 1,
      acks: -1,
      inFlight: 5,
      connections: 1,
      warmupMs: 100,
      durationMs: 700,
    });
    assert.ok(result.records > 0, 'no record was acknowledged in the window');
    assert.ok(result.wireBytes > 0 && result.latency.count === result.requests);
    assert.deepEqual(result.errors, {});
    assert.equal(result.recordsAcknowledged, result.recordsSent);
    assert.equal(result.offsetsIncreasing, true);
    assert.equal(result.offsetsContiguous, true);
    assert.equal(
      result.endOffsets.reduce((a, b) => a + b, 0),
      result.recordsSent,
      'end offsets do not add up to the records sent',
    );

    const consumer = await FetchConsumer.connect({
      host: '127.0.0.1',
      port: broker.port,
      topic,
      partitions,
      maxWaitMs: 50,
    });
    try {
      await consumer.readUntil(result.endOffsets, 10_000);
    } finally {
      consumer.close();
    }
    assert.equal(consumer.records, result.recordsSent);
    assert.deepEqual(consumer.offsets, result.endOffsets);
    assert.deepEqual(consumer.errors, {});
  });
});
