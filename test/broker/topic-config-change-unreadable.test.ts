// A topic's config change notification whose config node cannot be read for a while: the topic keeps the overrides
// it had, and the change applies once the node reads again. Kafka reads the node with getEntityConfigs, where only
// NONODE means no overrides; a failed read never resets a topic to the broker's defaults. Reset, a topic kept
// forever (retention.ms=-1) falls under the 7-day default and the next retention pass deletes its old records.
// The node is made unreadable with a ZooKeeper ACL (NOAUTH on read), as a tool writing the change would leave it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as zk from 'node-zookeeper-client';
import {
  configChangeCreatePath,
  encodeConfigChange,
  encodeEntityConfig,
  topicConfigPath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { readWhenLeading } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import {
  ACL_ADMIN_ONLY,
  ACL_OPEN,
  connectedZooKeeperTool,
  zooKeeperCall,
} from '../helpers/zookeeper-tool.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The topic's overrides as DescribeConfigs answers them (source DYNAMIC_TOPIC_CONFIG). */
async function describedOverrides(broker: InProcessBroker, topic: string): Promise<Map<string, string>> {
  const client = await WireClient.connect(broker.host, broker.port);
  try {
    const response = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 2, resourceName: topic, configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.equal(response.results[0].errorCode, ErrorCode.NONE);
    const configs = response.results[0].configs as { name: string; value: string; configSource: number }[];
    return new Map(configs.filter((c) => c.configSource === 1).map((c) => [c.name, c.value]));
  } finally {
    client.close();
  }
}

describe('a topic config change whose node cannot be read', () => {
  let zooKeeper: TestZooKeeper;
  let broker: InProcessBroker | undefined;
  let tool: zk.Client | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));

  before(async () => {
    zooKeeper = await startTestZooKeeper();
  });
  after(async () => {
    tool?.close();
    await broker?.stop().catch(() => {});
    await zooKeeper?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the overrides it had (old records survive retention); readable again, the change applies', async () => {
    broker = await startInProcessBroker(
      { 'zookeeper.connect': zooKeeper.connect, 'log.retention.check.interval.ms': 50 },
      { dataDir },
    );
    const topic = 'kept-forever';
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(client, topic, { configs: { 'retention.ms': '-1', 'segment.bytes': '1024' } });
      const old = Date.now() - 30 * 86_400_000;
      for (let i = 0; i < 8; i++) {
        const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
        const r = await produceBatch(client, topic, buildBatch([record]));
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    assert.equal((await describedOverrides(broker, topic)).get('retention.ms'), '-1');

    // The change a tool makes: the node's new content, then its notification. The node is unreadable meanwhile.
    tool = await connectedZooKeeperTool(zooKeeper.connect);
    const path = topicConfigPath(topic);
    const changed = { 'retention.ms': '-1', 'segment.bytes': '1024', 'max.message.bytes': '2000' };
    await zooKeeperCall((done) => tool!.setData(path, Buffer.from(encodeEntityConfig(changed)), -1, done));
    await zooKeeperCall((done) => tool!.setACL(path, ACL_ADMIN_ONLY, -1, done));
    await zooKeeperCall((done) =>
      tool!.create(
        configChangeCreatePath(),
        Buffer.from(encodeConfigChange({ entityPath: `topics/${topic}` })),
        zk.CreateMode.PERSISTENT_SEQUENTIAL,
        done,
      ),
    );

    await sleep(1500); // the notification is read, and many retention passes run
    const during = await describedOverrides(broker, topic);
    assert.equal(during.get('retention.ms'), '-1');
    assert.equal(during.has('max.message.bytes'), false);
    const offsets = (await readWhenLeading(broker, topic)).map((r) => r.offset);
    assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5, 6, 7]);

    await zooKeeperCall((done) => tool!.setACL(path, ACL_OPEN, -1, done));
    const deadline = Date.now() + 20_000;
    while ((await describedOverrides(broker, topic)).get('max.message.bytes') !== '2000') {
      assert.ok(Date.now() < deadline, 'the change was not applied after the node read again');
      await sleep(50);
    }
    assert.equal((await describedOverrides(broker, topic)).get('retention.ms'), '-1');
    assert.deepEqual(
      (await readWhenLeading(broker, topic)).map((r) => r.offset),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
  });
});
