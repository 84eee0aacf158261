// The null broker's clients mode, which the client benchmarks run against with --null-broker (issue 21: a
// client's cost with the broker not the bound): real clients produce to it and read the same records back in
// order, in a group, with committed offsets kept; offsets and ListOffsets agree with what was produced.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startNullBroker, stopNullBroker } from '../../bench/limits/null-broker.js';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';

describe('null broker, clients mode', { timeout: 60_000 }, () => {
  let stop: () => Promise<void>;
  let bootstrap: string;

  before(async () => {
    const { child, port } = await startNullBroker(1, true);
    stop = () => stopNullBroker(child);
    bootstrap = `127.0.0.1:${port}`;
  });
  after(async () => {
    await stop?.();
  });

  it("takes Brook's and kafkajs's records with consecutive offsets and serves them back in a group", async () => {
    const topic = 'null-clients';
    const admin = new Admin({ bootstrapServers: bootstrap });
    try {
      const [created] = await admin.createTopics([{ topic, numPartitions: 1, replicationFactor: 1 }]);
      assert.equal(created!.error, null);

      const producer = new Producer({ bootstrapServers: bootstrap, acks: 'all', lingerMs: 5 });
      const sent = await Promise.all(
        Array.from({ length: 300 }, (_, i) => producer.send({ topic, value: Buffer.from(`brook-${i}`) })),
      );
      await producer.close();
      assert.deepEqual(
        sent.map((m) => m.offset),
        Array.from({ length: 300 }, (_, i) => i),
        'offsets follow the records of each batch',
      );

      const kafka = new Kafka({ brokers: [bootstrap], clientId: 'null-test', logLevel: logLevel.NOTHING });
      const kafkajsProducer = kafka.producer();
      await kafkajsProducer.connect();
      const [answer] = await kafkajsProducer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: 100 }, (_, i) => ({ value: `kafkajs-${i}` })),
      });
      await kafkajsProducer.disconnect();
      assert.equal(answer!.baseOffset, '300');

      const [end] = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]);
      assert.equal(end!.offset, 400);

      const consumer = new Consumer({
        bootstrapServers: bootstrap,
        groupId: 'null-group',
        autoOffsetReset: 'earliest',
      });
      consumer.subscribe([topic]);
      const values: string[] = [];
      const offsets: number[] = [];
      const deadline = Date.now() + 20_000;
      while (values.length < 400 && Date.now() < deadline) {
        for (const record of await consumer.poll(500)) {
          values.push(record.value!.toString());
          offsets.push(record.offset);
        }
      }
      await consumer.commit();
      const committed = await consumer.committed([{ topic, partition: 0 }]);
      await consumer.close();
      assert.deepEqual(
        offsets,
        Array.from({ length: 400 }, (_, i) => i),
        'every offset once, in order',
      );
      assert.equal(values[0], 'brook-0');
      assert.equal(values[299], 'brook-299');
      assert.equal(values[300], 'kafkajs-0');
      assert.equal(values[399], 'kafkajs-99');
      assert.deepEqual([...committed.values()], [400], 'the commit is kept');
    } finally {
      await admin.close();
    }
  });

  it('answers a fetch past the end after its maxWaitMs, empty, and keeps the connection', async () => {
    const consumer = new Consumer({
      bootstrapServers: bootstrap,
      groupId: 'null-empty',
      autoOffsetReset: 'latest',
    });
    try {
      consumer.subscribe(['null-empty-topic']);
      const started = Date.now();
      assert.deepEqual(await consumer.poll(800), []);
      assert.ok(Date.now() - started >= 700, 'poll waited for records rather than failing at once');
      const producer = new Producer({ bootstrapServers: bootstrap });
      await producer.send({ topic: 'null-empty-topic', value: Buffer.from('late') });
      await producer.close();
      let got: string[] = [];
      const deadline = Date.now() + 10_000;
      while (got.length === 0 && Date.now() < deadline)
        got = (await consumer.poll(500)).map((r) => r.value!.toString());
      assert.deepEqual(got, ['late'], 'a record appended while the consumer waits reaches it');
    } finally {
      await consumer.close();
    }
  });
});
