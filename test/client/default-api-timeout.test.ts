// default.api.timeout.ms (ConsumerConfig, an INT of at least 0, default 60000): Kafka's consumer bounds every call
// given no timeout of its own by it (ClassicKafkaConsumer: position, committed, beginningOffsets, endOffsets,
// offsetsForTimes, commitSync, partitionsFor, listTopics), retrying retriable failures until then and throwing a
// TimeoutException after. Here the in-process broker leaves the consumer's ListOffsets, OffsetFetch, OffsetCommit
// and Metadata unanswered, and each call must fail with a RequestTimeoutError about when the configured timeout has
// passed.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin } from '../../src/client/admin.js';
import { clientOptionsFromLayers } from '../../src/client/client-properties.js';
import { Consumer, type ConsumerOptions } from '../../src/client/consumer.js';
import { ConfigError, RequestTimeoutError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { sleep } from '../helpers/wait.js';

const TOPIC = 'default-api-timeout';
const TP = { topic: TOPIC, partition: 0 };
const TIMEOUT_MS = 1000;

describe('default.api.timeout.ms bounds the consumer calls given no timeout', () => {
  let broker: InProcessBroker;
  let bootstrapServers: string;
  let n = 0;

  before(async () => {
    broker = await startInProcessBroker({ 'offsets.topic.num.partitions': 1 });
    bootstrapServers = `127.0.0.1:${broker.port}`;
    const admin = new Admin({ bootstrapServers });
    try {
      await admin.createTopics([{ topic: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    } finally {
      await admin.close();
    }
    const producer = new Producer({ bootstrapServers });
    try {
      await producer.send({ ...TP, value: Buffer.from('v0') });
    } finally {
      await producer.close();
    }
  });
  after(async () => {
    broker?.interception.clear();
    await broker?.stop();
  });

  /**
   * Runs `call` on a fresh consumer whose requests of `apiKey` the broker never answers (each call its own consumer,
   * so that unanswered requests do not fill one connection's in-flight slots), and checks that it fails with a
   * RequestTimeoutError once default.api.timeout.ms has passed, not long after.
   */
  async function timesOut(
    apiKey: number,
    what: string,
    call: (c: Consumer) => Promise<unknown>,
  ): Promise<void> {
    const clientId = `default-api-timeout-${++n}`;
    broker.interception.set((request) =>
      request.apiKey === apiKey && request.header.clientId === clientId ? null : undefined,
    );
    const options = {
      bootstrapServers,
      clientId,
      groupId: `default-api-timeout-${n}`,
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
      defaultApiTimeoutMs: TIMEOUT_MS,
    } as ConsumerOptions;
    const consumer = new Consumer(options);
    try {
      consumer.assign([TP]);
      const started = Date.now();
      const outcome = await Promise.race([
        call(consumer).then(
          () => 'resolved',
          (err: unknown) => err,
        ),
        sleep(TIMEOUT_MS * 5).then(() => `still waiting after ${TIMEOUT_MS * 5} ms`),
      ]);
      const elapsedMs = Date.now() - started;
      assert.ok(outcome instanceof RequestTimeoutError, `${what}: ${String(outcome)}`);
      assert.ok(elapsedMs >= TIMEOUT_MS - 50, `${what} failed after ${elapsedMs} ms`);
      assert.ok(elapsedMs < TIMEOUT_MS * 3, `${what} failed after ${elapsedMs} ms`);
    } finally {
      broker.interception.clear();
      await consumer.close({ timeoutMs: 0 });
    }
  }

  it('endOffsets, beginningOffsets, offsetsForTimes and position with ListOffsets unanswered', async () => {
    await timesOut(ApiKey.LIST_OFFSETS, 'endOffsets', (c) => c.endOffsets([TP]));
    await timesOut(ApiKey.LIST_OFFSETS, 'beginningOffsets', (c) => c.beginningOffsets([TP]));
    await timesOut(ApiKey.LIST_OFFSETS, 'offsetsForTimes', (c) =>
      c.offsetsForTimes([{ ...TP, timestamp: 0 }]),
    );
    await timesOut(ApiKey.LIST_OFFSETS, 'position', (c) => c.position(TP));
  });

  it('committed and commit with OffsetFetch and OffsetCommit unanswered', async () => {
    await timesOut(ApiKey.OFFSET_FETCH, 'committed', (c) => c.committed([TP]));
    await timesOut(ApiKey.OFFSET_FETCH, 'committedWithMetadata', (c) => c.committedWithMetadata([TP]));
    await timesOut(ApiKey.OFFSET_COMMIT, 'commit', (c) => c.commit([{ ...TP, offset: 0 }]));
  });

  it('partitionsFor and listTopics with Metadata unanswered', async () => {
    await timesOut(ApiKey.METADATA, 'partitionsFor', (c) => c.partitionsFor(TOPIC));
    await timesOut(ApiKey.METADATA, 'listTopics', (c) => c.listTopics());
  });

  it('partitionsFor and listTopics answer as Kafka’s: an unknown topic has no partitions', async () => {
    const consumer = new Consumer({ bootstrapServers, allowAutoCreateTopics: false });
    try {
      assert.deepEqual(await consumer.partitionsFor('default-api-timeout-none'), []);
      const [p0] = await consumer.partitionsFor(TOPIC);
      assert.equal(p0?.partition, 0);
      assert.equal(p0?.leader, broker.broker.brokerId);
      const topics = await consumer.listTopics();
      assert.equal(topics.get(TOPIC)?.length, 1);
      assert.ok(!topics.has('default-api-timeout-none'));
    } finally {
      await consumer.close();
    }
  });

  it('0 does not bound poll(): its position lookup runs on, as Kafka’s', async () => {
    const consumer = new Consumer({
      bootstrapServers,
      groupId: 'default-api-timeout-zero',
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      defaultApiTimeoutMs: 0,
    } as ConsumerOptions);
    try {
      consumer.assign([TP]);
      const offsets: number[] = [];
      for (const deadline = Date.now() + 10_000; offsets.length === 0 && Date.now() < deadline; )
        for (const r of await consumer.poll(200)) offsets.push(r.offset);
      assert.deepEqual(offsets, [0]);
    } finally {
      await consumer.close();
    }
  });

  it('is an INT of at least 0, and Kafka properties set it', () => {
    const withTimeout = (value: unknown) =>
      new Consumer({ bootstrapServers, defaultApiTimeoutMs: value } as ConsumerOptions);
    assert.throws(
      () => withTimeout(-1),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message === 'Invalid value -1 for configuration default.api.timeout.ms: Value must be at least 0',
    );
    assert.throws(() => withTimeout(1.5), ConfigError);
    assert.throws(() => withTimeout(2 ** 31), ConfigError);
    assert.throws(() => withTimeout('1000'), ConfigError);
    assert.throws(
      () => new Admin({ bootstrapServers, defaultApiTimeoutMs: -1 } as ConsumerOptions),
      ConfigError,
    );
    assert.deepEqual(
      clientOptionsFromLayers('consumer', [{ prefix: '', config: { 'default.api.timeout.ms': '1000' } }]),
      { defaultApiTimeoutMs: 1000 },
    );
    assert.deepEqual(
      clientOptionsFromLayers('admin', [{ prefix: '', config: { 'default.api.timeout.ms': '0' } }]),
      { defaultApiTimeoutMs: 0 },
    );
  });
});
