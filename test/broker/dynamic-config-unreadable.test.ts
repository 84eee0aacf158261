// Config nodes other than a topic's that cannot be read for a while (a ZooKeeper ACL that denies reading, NOAUTH):
// the cluster-wide dynamic broker default keeps its values through a change notification (read as none, a
// cluster-wide log.retention.ms=-1 would become the 7-day default and a retention pass would delete old records),
// and AlterClientQuotas of a user refuses instead of writing over the document it could not read (it would drop
// the user's SCRAM credentials, kept in the same document). Kafka: getEntityConfigs, where only NONODE is none.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as zk from 'node-zookeeper-client';
import {
  brokerConfigPath,
  CONFIG_PATH,
  configChangeCreatePath,
  DEFAULT_BROKER_ENTITY,
  decodeEntityConfig,
  encodeConfigChange,
  encodeEntityConfig,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { readWhenLeading } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import { ACL_OPEN, connectedZooKeeperTool, zooKeeperCall } from '../helpers/zookeeper-tool.js';

const anyone = new zk.Id('world', 'anyone');
/** Write and administer: the broker's reads answer NOAUTH while its writes (and the test's) go through. */
const UNREADABLE = [new zk.ACL(zk.Permission.WRITE | zk.Permission.ADMIN, anyone)];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A topic's effective value of `key` as DescribeConfigs answers it. */
async function describedValue(broker: InProcessBroker, topic: string, key: string): Promise<string | null> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [key] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(response.results[0].errorCode, ErrorCode.NONE);
    return (response.results[0].configs as { value: string | null }[])[0]?.value ?? null;
  } finally {
    client.close();
  }
}

describe('dynamic config nodes that cannot be read', () => {
  let zooKeeper: TestZooKeeper;
  let broker: InProcessBroker | undefined;
  let tool: zk.Client | undefined;

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
  });
  after(async () => {
    tool?.close();
    await broker?.stop().catch(() => {});
    await zooKeeper?.stop();
  });

  it('keeps the cluster-wide broker default through a change it cannot read; readable again, it applies', async () => {
    const path = brokerConfigPath(DEFAULT_BROKER_ENTITY);
    const kept = { 'log.retention.ms': '-1' };
    await zooKeeperCall((done) => tool!.mkdirp(path, Buffer.from(encodeEntityConfig(kept)), done));
    broker = await startInProcessBroker({
      'zookeeper.connect': zooKeeper.connect,
      'log.retention.check.interval.ms': 50,
    });
    try {
      await keepsTheDefault(broker, path);
    } finally {
      await zooKeeperCall((done) => tool!.setACL(path, ACL_OPEN, -1, done)).catch(() => {});
      await broker.stop();
      broker = undefined;
    }
  });

  async function keepsTheDefault(broker: InProcessBroker, path: string): Promise<void> {
    const topic = 'under-the-default';
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(client, topic, { configs: { 'segment.bytes': '1024' } });
      const old = Date.now() - 30 * 86_400_000;
      for (let i = 0; i < 8; i++) {
        const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
        assert.equal((await produceBatch(client, topic, buildBatch([record]))).errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    assert.equal(await describedValue(broker, topic, 'retention.ms'), '-1');

    const changed = { 'log.retention.ms': '-1', 'log.roll.ms': '3600000' };
    await zooKeeperCall((done) => tool!.setData(path, Buffer.from(encodeEntityConfig(changed)), -1, done));
    await zooKeeperCall((done) => tool!.setACL(path, UNREADABLE, -1, done));
    const notification = Buffer.from(encodeConfigChange({ entityPath: `brokers/${DEFAULT_BROKER_ENTITY}` }));
    await zooKeeperCall((done) =>
      tool!.create(configChangeCreatePath(), notification, zk.CreateMode.PERSISTENT_SEQUENTIAL, done),
    );

    await sleep(1500); // the notification is read, and many retention passes run
    assert.equal(await describedValue(broker, topic, 'retention.ms'), '-1');
    assert.deepEqual(
      (await readWhenLeading(broker, topic)).map((r) => r.offset),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );

    await zooKeeperCall((done) => tool!.setACL(path, ACL_OPEN, -1, done));
    const deadline = Date.now() + 20_000;
    while ((await describedValue(broker, topic, 'segment.ms')) !== '3600000') {
      assert.ok(Date.now() < deadline, 'the change was not applied after the node read again');
      await sleep(50);
    }
    assert.equal(await describedValue(broker, topic, 'retention.ms'), '-1');
  }

  it('AlterClientQuotas of a user whose document it cannot read refuses and leaves the document whole', async () => {
    const path = `${CONFIG_PATH}/users/alice`;
    const scram = 'salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096';
    await zooKeeperCall((done) =>
      tool!.mkdirp(path, Buffer.from(encodeEntityConfig({ 'SCRAM-SHA-256': scram })), done),
    );
    broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
    await zooKeeperCall((done) => tool!.setACL(path, UNREADABLE, -1, done));
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      const response = await client.call(ApiKey.ALTER_CLIENT_QUOTAS, 1, {
        entries: [
          {
            entity: [{ entityType: 'user', entityName: 'alice' }],
            ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }],
          },
        ],
        validateOnly: false,
      });
      assert.equal(response.entries[0].errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
    } finally {
      client.close();
    }
    await zooKeeperCall((done) => tool!.setACL(path, ACL_OPEN, -1, done));
    const data = await new Promise<Buffer>((resolve, reject) =>
      tool!.getData(path, (error, bytes) => (error ? reject(error) : resolve(bytes))),
    );
    const stored = decodeEntityConfig(new Uint8Array(data));
    assert.ok(stored.ok);
    assert.deepEqual(stored.value, { 'SCRAM-SHA-256': scram });
  });
});
