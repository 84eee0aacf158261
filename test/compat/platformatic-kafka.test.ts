// @platformatic/kafka against a Brook broker: admin (create, metadata, describe configs, list offsets, delete)
// and an idempotent producer with keys, headers and each codec it offers on Node 20. Its consumer needs consumer
// groups; the records are read back with Brook's own codecs and compared.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Admin, Producer, stringSerializers } from '@platformatic/kafka';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

describe('@platformatic/kafka against a Brook broker', () => {
  let broker: BrokerProcess;
  let admin: Admin;
  before(async () => {
    broker = await startBroker();
    admin = new Admin({ clientId: 'brook-compat', bootstrapBrokers: [broker.bootstrap] });
  });
  after(async () => {
    await admin?.close();
    await broker?.stop();
  });

  it('creates topics, reads metadata and configs, and deletes topics with its admin client', async () => {
    const created = await admin.createTopics({ topics: ['plt-admin'], partitions: 2, replicas: 1 });
    assert.equal(created[0]!.name, 'plt-admin');
    assert.equal(created[0]!.partitions, 2);
    const md = await admin.metadata({ topics: ['plt-admin'] });
    assert.equal(md.topics.get('plt-admin')!.partitionsCount, 2);
    const configs = await admin.describeConfigs({
      resources: [{ resourceType: 2, resourceName: 'plt-admin', configurationKeys: ['cleanup.policy'] }],
    });
    assert.equal(configs[0]!.configs[0]!.value, 'delete');
    await admin.deleteTopics({ topics: ['plt-admin'] });
    assert.ok(!(await admin.listTopics()).includes('plt-admin'));
  });

  for (const codec of ['none', 'gzip', 'snappy', 'lz4'] as const) {
    it(`produces idempotently with ${codec} compression and the records read back equal`, async () => {
      const topic = `plt-${codec}`;
      await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
      const before = BigInt(Date.now());
      const producer = new Producer({
        clientId: 'brook-compat-producer',
        bootstrapBrokers: [broker.bootstrap],
        serializers: stringSerializers,
        idempotent: true,
        compression: codec,
      });
      try {
        const messages = Array.from({ length: 25 }, (_, i) => ({
          topic,
          partition: 0,
          key: `key-${i}`,
          value: `${codec}-${i}`.repeat(1 + (i % 4)),
          headers: new Map([['n', String(i)]]),
        }));
        const result = await producer.send({ messages });
        assert.ok((result.offsets ?? []).length > 0);
        const listed = await admin.listOffsets({
          topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: before }] }],
        });
        assert.equal(listed[0]!.partitions[0]!.offset, 0n);
        const client = await WireClient.connect(broker.host, broker.port);
        try {
          const records = await readPartition(client, topic, 0);
          assert.deepEqual(
            records.map((r) => [
              r.offset,
              r.key!.toString(),
              r.value!.toString(),
              r.headers[0]!.value!.toString(),
            ]),
            messages.map((m, i) => [i, m.key, m.value, String(i)]),
          );
        } finally {
          client.close();
        }
      } finally {
        await producer.close();
      }
    });
  }
});
