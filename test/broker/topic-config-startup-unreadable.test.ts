// A broker whose logs on disk include a topic with a config node it cannot read does not start: Kafka's
// LogManager.startup reads every such topic's overrides (fetchTopicConfigOverrides -> getEntityConfigs), and a
// ZooKeeper error other than NONODE fails the start. Opened on the broker's defaults instead, a topic kept forever
// (retention.ms=-1) would be under the 7-day default until the controller's first request, and a retention pass in
// that window deletes its data. Here the topic's node is made unreadable with a ZooKeeper ACL (NOAUTH on read), and
// then given a value that is not a string, on which Kafka's ConfigEntityZNode.decode throws.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as zk from 'node-zookeeper-client';
import { encodeEntityConfig, topicConfigPath } from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { readWhenLeading } from '../helpers/cluster.js';
import { type InProcessBroker, startInProcessBroker } from '../helpers/in-process-broker.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../helpers/zookeeper.js';
import {
  ACL_ADMIN_ONLY,
  ACL_OPEN,
  connectedZooKeeperTool,
  setZooKeeperAcl,
  zooKeeperCall,
} from '../helpers/zookeeper-tool.js';

describe('a topic config node unreadable at start', () => {
  let zooKeeper: TestZooKeeper;
  let broker: InProcessBroker | undefined;
  let tool: zk.Client | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'brook-test-'));
  const overrides = () => ({
    'zookeeper.connect': zooKeeper.connect,
    'log.retention.check.interval.ms': 1,
  });

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
  });
  after(async () => {
    tool?.close();
    await broker?.stop().catch(() => {});
    await zooKeeper?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('fails the start, naming the topic; readable again, the topic kept forever has all its records', async () => {
    broker = await startInProcessBroker(overrides(), { dataDir });
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(client, 'kept-forever', {
        configs: { 'retention.ms': '-1', 'segment.bytes': '1024' },
      });
      const old = Date.now() - 30 * 86_400_000;
      for (let i = 0; i < 8; i++) {
        const record = { key: `k${i}`, value: 'x'.repeat(300), timestamp: old };
        const r = await produceBatch(client, 'kept-forever', buildBatch([record]));
        assert.equal(r.errorCode, ErrorCode.NONE);
      }
    } finally {
      client.close();
    }
    await broker.stop();
    broker = undefined;

    await setZooKeeperAcl(zooKeeper.connect, topicConfigPath('kept-forever'), ACL_ADMIN_ONLY);
    await assert.rejects(
      startInProcessBroker(overrides(), { dataDir }).then((b) => {
        broker = b;
      }),
      /config overrides of 1 topics with logs on disk failed \(kept-forever: NOAUTH\)/,
    );

    await setZooKeeperAcl(zooKeeper.connect, topicConfigPath('kept-forever'), ACL_OPEN);
    broker = await startInProcessBroker(overrides(), { dataDir });
    const offsets = (await readWhenLeading(broker, 'kept-forever')).map((r) => r.offset);
    assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5, 6, 7]);
    await broker.stop();
    broker = undefined;
  });

  it('a config value that is not a string fails the start too, as Kafka decode throws; fixed, all records are there', async () => {
    // Before, the document counted as no overrides: the logs opened on the broker's defaults and a retention pass
    // deleted the 30-day-old records of a topic kept forever.
    const path = topicConfigPath('kept-forever');
    const bad = Buffer.from('{"version":1,"config":{"retention.ms":-1,"segment.bytes":"1024"}}');
    await zooKeeperCall((done) => tool!.setData(path, bad, -1, done));
    await assert.rejects(
      startInProcessBroker(overrides(), { dataDir }).then((b) => {
        broker = b;
      }),
      /config overrides of 1 topics with logs on disk failed \(kept-forever: .*retention\.ms is not a string: -1\)/,
    );
    const good = Buffer.from(encodeEntityConfig({ 'retention.ms': '-1', 'segment.bytes': '1024' }));
    await zooKeeperCall((done) => tool!.setData(path, good, -1, done));
    broker = await startInProcessBroker(overrides(), { dataDir });
    const offsets = (await readWhenLeading(broker, 'kept-forever')).map((r) => r.offset);
    assert.deepEqual(offsets, [0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
