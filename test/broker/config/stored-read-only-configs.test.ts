// Dynamic broker configs found in ZooKeeper that cannot change dynamically (written by an older release, or by
// hand) are ignored, as Kafka's DynamicBrokerConfig.fromPersistentProps drops them ("Non-dynamic configs
// configured in ZooKeeper will be ignored"), as it drops key store settings without a listener prefix and, from
// the cluster default, per-broker keys: the broker runs with, and DescribeConfigs shows, the static or default
// value.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerId } from '../../../src/common/ids.js';
import { type CoordinationStore, connectZooKeeper } from '../../../src/controller/store/index.js';
import {
  brokerConfigPath,
  DEFAULT_BROKER_ENTITY,
  encodeEntityConfig,
} from '../../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import type { IncrementalAlterConfigsResponse } from '../../../src/protocol/messages/44-incremental-alter-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { WireClient } from '../../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../../helpers/zookeeper.js';

const BROKER = 4;
const DYNAMIC_BROKER = 2;
const DYNAMIC_DEFAULT = 3;
const DEFAULT = 5;

describe('read-only broker configs stored as dynamic ones', () => {
  let zk: TestZooKeeper;
  let session: CoordinationStore | undefined;
  let broker: BrokerProcess | undefined;
  let client: WireClient | undefined;
  before(async () => {
    zk = await startTestZooKeeper();
  });
  after(async () => {
    client?.close();
    await session?.close();
    await broker?.stop();
    await zk?.stop();
  });

  it('are ignored at start, beside the dynamic keys stored with them', async () => {
    const opened = await connectZooKeeper({ connect: zk.connect, sessionTimeoutMs: 6000 });
    assert.ok(opened.ok);
    session = opened.value;
    for (const path of ['/config', '/config/brokers'])
      assert.ok((await session.create(path, new Uint8Array())).ok);
    const own = encodeEntityConfig({
      'log.retention.hours': '1',
      'num.io.threads': '9',
      'ssl.keystore.type': 'PEM',
    });
    assert.ok((await session.create(brokerConfigPath(0 as BrokerId), own)).ok);
    const cluster = encodeEntityConfig({
      'log.roll.hours': '2',
      'log.retention.ms': '7200000',
      'sasl.enabled.mechanisms': 'PLAIN',
    });
    assert.ok((await session.create(brokerConfigPath(DEFAULT_BROKER_ENTITY), cluster)).ok);

    broker = await startBroker({ overrides: { 'zookeeper.connect': zk.connect } });
    client = await WireClient.connect(broker.host, broker.port);
    const response = await client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configurationKeys: [
            'log.retention.hours',
            'num.io.threads',
            'log.roll.hours',
            'log.retention.ms',
            'ssl.keystore.type',
            'sasl.enabled.mechanisms',
          ],
        },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const described = Object.fromEntries(
      response.results[0]!.configs.map((c) => [c.name, [c.value, c.configSource]]),
    );
    assert.deepEqual(described, {
      'log.retention.hours': ['168', DEFAULT],
      'num.io.threads': ['9', DYNAMIC_BROKER],
      'log.roll.hours': ['168', DEFAULT],
      'log.retention.ms': ['7200000', DYNAMIC_DEFAULT],
      'ssl.keystore.type': ['JKS', DEFAULT],
      'sasl.enabled.mechanisms': ['GSSAPI', DEFAULT],
    });
    // Kafka validates the stored set with the change: refused until the change deletes the key.
    const alter = async (configs: { name: string; configOperation: number; value: string | null }[]) => {
      const altered = await client!.call<IncrementalAlterConfigsResponse>(
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        {
          resources: [{ resourceType: BROKER, resourceName: '0', configs }],
          validateOnly: false,
        },
      );
      return [altered.responses[0]!.errorCode, altered.responses[0]!.errorMessage];
    };
    const setThreads = { name: 'num.io.threads', configOperation: 0, value: '10' };
    assert.deepEqual(await alter([setThreads]), [
      ErrorCode.INVALID_REQUEST,
      'Cannot update these configs dynamically: Set(log.retention.hours)',
    ]);
    const deleteHours = { name: 'log.retention.hours', configOperation: 1, value: null };
    assert.deepEqual(await alter([setThreads, deleteHours]), [
      ErrorCode.INVALID_REQUEST,
      'These security configs can be dynamically updated only per-listener using the listener prefix: ' +
        'Set(ssl.keystore.type)',
    ]);
    const deleteKeystoreType = { name: 'ssl.keystore.type', configOperation: 1, value: null };
    assert.deepEqual(await alter([setThreads, deleteHours, deleteKeystoreType]), [ErrorCode.NONE, null]);
  });
});
