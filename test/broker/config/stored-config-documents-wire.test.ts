// IncrementalAlterConfigs edits the config document stored in ZooKeeper, read as Kafka's ZkAdminManager reads it
// (AdminZkClient.fetchEntityConfig, whose ConfigEntityZNode.decode parses with Json.parseBytes): a document that is
// not JSON holds no configs, so the edit writes over it and answers NONE; one with a value that is not a string
// makes decode throw, answered UNKNOWN_SERVER_ERROR without a message (ApiError.fromThrowable sends none for that
// code) and the document left as it is. Before, Brook refused both with "the coordination store could not be read".

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as zk from 'node-zookeeper-client';
import {
  brokerConfigPath,
  DEFAULT_BROKER_ENTITY,
  decodeEntityConfig,
  topicConfigPath,
} from '../../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { type InProcessBroker, startInProcessBroker } from '../../helpers/in-process-broker.js';
import { createTopic, WireClient } from '../../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../../helpers/zookeeper.js';
import { connectedZooKeeperTool, zooKeeperCall } from '../../helpers/zookeeper-tool.js';

const TOPIC = 2;
const BROKER = 4;
const SET = 0;

describe('IncrementalAlterConfigs over a stored document Kafka cannot decode', () => {
  let zooKeeper: TestZooKeeper;
  let tool: zk.Client | undefined;
  let broker: InProcessBroker | undefined;
  let client: WireClient | undefined;

  before(async () => {
    zooKeeper = await startTestZooKeeper();
    tool = await connectedZooKeeperTool(zooKeeper.connect);
    broker = await startInProcessBroker({ 'zookeeper.connect': zooKeeper.connect });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    tool?.close();
    await broker?.stop();
    await zooKeeper?.stop();
  });

  const stored = (path: string) =>
    new Promise<Buffer>((resolve, reject) =>
      tool!.getData(path, (error, data) => (error ? reject(error) : resolve(data))),
    );
  const overwrite = (path: string, text: string) =>
    zooKeeperCall((done) => tool!.setData(path, Buffer.from(text), -1, done));

  async function alter(resourceType: number, resourceName: string, name: string, value: string) {
    const response = await client!.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [{ resourceType, resourceName, configs: [{ name, configOperation: SET, value }] }],
      validateOnly: false,
    });
    const result = response.responses[0]!;
    return [result.errorCode, result.errorMessage];
  }

  it('writes over a topic config document that is not JSON', async () => {
    await createTopic(client!, 'not-json', { configs: { 'cleanup.policy': 'compact' } });
    const path = topicConfigPath('not-json');
    await overwrite(path, '{"version":1,"config":{"cleanup.policy":');
    assert.deepEqual(await alter(TOPIC, 'not-json', 'retention.ms', '3600000'), [ErrorCode.NONE, null]);
    const written = decodeEntityConfig(new Uint8Array(await stored(path)));
    assert.ok(written.ok);
    assert.deepEqual(written.value, { 'retention.ms': '3600000' });
  });

  it('answers UNKNOWN_SERVER_ERROR without a message for a value that is not a string, and writes nothing', async () => {
    await createTopic(client!, 'not-a-string', {});
    const path = topicConfigPath('not-a-string');
    const bad = '{"version":1,"config":{"retention.ms":5}}';
    await overwrite(path, bad);
    assert.deepEqual(await alter(TOPIC, 'not-a-string', 'segment.ms', '3600000'), [
      ErrorCode.UNKNOWN_SERVER_ERROR,
      null,
    ]);
    assert.equal((await stored(path)).toString(), bad);
  });

  it('writes over a cluster-wide broker config document that is not JSON', async () => {
    const path = brokerConfigPath(DEFAULT_BROKER_ENTITY);
    await zooKeeperCall((done) => tool!.mkdirp(path, Buffer.from('not json'), done));
    await overwrite(path, 'not json');
    assert.deepEqual(await alter(BROKER, '', 'log.roll.ms', '3600000'), [ErrorCode.NONE, null]);
    const written = decodeEntityConfig(new Uint8Array(await stored(path)));
    assert.ok(written.ok);
    assert.deepEqual(written.value, { 'log.roll.ms': '3600000' });
  });
});
