// kafkajs against a Brook broker: admin (create, list, metadata, offsets, offsets by time, delete), and an
// idempotent producer with keys, headers and compression. Consuming with kafkajs needs consumer groups; here the
// records are read back with Brook's own codecs and compared.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import kafkajs from 'kafkajs';
import { compress, decompress } from '../../src/protocol/compression/index.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { readPartition, WireClient } from '../helpers/wire-client.js';

// kafkajs is CommonJS; its named exports are read from the default export.
const {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  CompressionCodecs,
  CompressionTypes,
  Kafka,
  logLevel,
  ResourcePatternTypes,
} = kafkajs;
type Kafka = InstanceType<typeof Kafka>;

// kafkajs ships gzip only; other codecs are plugged in by the application. Brook's own codecs stand in here, so
// the batches kafkajs frames carry snappy, lz4 and zstd payloads.
for (const [type, id] of [
  [CompressionTypes.Snappy, 2],
  [CompressionTypes.LZ4, 3],
  [CompressionTypes.ZSTD, 4],
] as const) {
  CompressionCodecs[type] = () => ({
    compress: async (encoder: { buffer: Buffer }) => compress(id, encoder.buffer),
    decompress: async (buffer: Buffer) => decompress(id, buffer),
  });
}

describe('kafkajs against a Brook broker', () => {
  let broker: BrokerProcess;
  let kafka: Kafka;
  before(async () => {
    broker = await startBroker();
    kafka = new Kafka({
      clientId: 'brook-compat',
      brokers: [broker.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3 },
    });
  });
  after(async () => {
    await broker?.stop();
  });

  it('creates, lists, describes and deletes topics with its admin client', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.equal(
        await admin.createTopics({
          topics: [{ topic: 'kjs-admin', numPartitions: 3 }],
          waitForLeaders: true,
        }),
        true,
      );
      assert.equal(
        await admin.createTopics({ topics: [{ topic: 'kjs-admin', numPartitions: 3 }] }),
        false,
        'already exists',
      );
      assert.ok((await admin.listTopics()).includes('kjs-admin'));
      const md = await admin.fetchTopicMetadata({ topics: ['kjs-admin'] });
      assert.equal(md.topics[0]!.partitions.length, 3);
      const cluster = await admin.describeCluster();
      assert.equal(cluster.brokers.length, 1);
      assert.equal(cluster.controller, 0);
      await admin.deleteTopics({ topics: ['kjs-admin'] });
      assert.ok(!(await admin.listTopics()).includes('kjs-admin'));
    } finally {
      await admin.disconnect();
    }
  });

  it('is told SECURITY_DISABLED by the ACL APIs, as by a Kafka broker without an authorizer', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const securityDisabled = (e: { type?: string }): boolean => e.type === 'SECURITY_DISABLED';
      await assert.rejects(
        admin.describeAcls({
          resourceType: AclResourceTypes.TOPIC,
          resourcePatternType: ResourcePatternTypes.ANY,
          operation: AclOperationTypes.ANY,
          permissionType: AclPermissionTypes.ANY,
        }),
        securityDisabled,
      );
      const acl = {
        resourceType: AclResourceTypes.TOPIC,
        resourceName: 'kjs-acl',
        resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: 'User:alice',
        host: '*',
        operation: AclOperationTypes.READ,
        permissionType: AclPermissionTypes.ALLOW,
      };
      await assert.rejects(admin.createAcls({ acl: [acl] }), securityDisabled);
      await assert.rejects(admin.deleteAcls({ filters: [acl] }), securityDisabled);
    } finally {
      await admin.disconnect();
    }
  });

  for (const [name, codec] of [
    ['none', CompressionTypes.None],
    ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy],
    ['lz4', CompressionTypes.LZ4],
    ['zstd', CompressionTypes.ZSTD],
  ] as const) {
    it(`produces idempotently with ${name} compression, keys and headers, and the records read back equal`, async () => {
      const topic = `kjs-${name}`;
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      const before = Date.now();
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const messages = Array.from({ length: 30 }, (_, i) => ({
        key: `key-${i}`,
        value: `${name}-value-${i}`.repeat(1 + (i % 3)),
        headers: { n: String(i) },
      }));
      const sent = await producer.send({ topic, messages, compression: codec, acks: -1 });
      assert.equal(sent[0]!.errorCode, 0);
      assert.equal(sent[0]!.baseOffset, '0');
      await producer.disconnect();
      const offsets = await admin.fetchTopicOffsets(topic);
      assert.equal(offsets[0]!.high, '30');
      const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, before);
      assert.equal(byTime[0]!.offset, '0');
      await admin.disconnect();
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
    });
  }
});
