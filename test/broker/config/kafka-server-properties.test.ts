// A Kafka server.properties starts a Brook broker unchanged: keys Kafka knows that Brook does not implement
// (SASL/Kerberos, JMX and metric reporters, ZooKeeper TLS, authorizer properties) are accepted and named in one
// warning line, in Kafka's words for unused configs; keys neither knows are named in one more line. On a
// running broker, AlterConfigs and IncrementalAlterConfigs accept keys Brook does not know, as Kafka accepts
// custom broker configs, and DescribeConfigs reports them as sensitive.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { type BrokerProcess, startBroker } from '../../helpers/broker-process.js';
import { WireClient } from '../../helpers/wire-client.js';
import { startTestZooKeeper, type TestZooKeeper } from '../../helpers/zookeeper.js';

const FIXTURE = resolve(import.meta.dirname, '../../../../test/fixtures/kafka/server.properties');
const BROKER = 4;

describe("a Kafka server.properties and Kafka's keys on a Brook broker", () => {
  let zk: TestZooKeeper;
  let broker: BrokerProcess;
  let client: WireClient;
  before(async () => {
    zk = await startTestZooKeeper();
    broker = await startBroker({
      configPath: FIXTURE,
      overrides: { 'zookeeper.connect': zk.connect, 'advertised.listeners': 'PLAINTEXT://127.0.0.1:0' },
    });
    client = await WireClient.connect(broker.host, broker.port);
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    await zk?.stop();
  });

  it('starts and serves, naming the Kafka keys it does not implement in one warning line', async () => {
    const metadata = await client.call(ApiKey.METADATA, 12, {
      topics: null,
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    assert.equal(metadata.brokers.length, 1);
    const lines = broker.log().split('\n');
    const unused = lines.filter((l) => l.includes('were supplied but are not used yet'));
    assert.equal(unused.length, 1, broker.log());
    for (const key of [
      'sasl.kerberos.service.name',
      'sasl.kerberos.kinit.cmd',
      'kafka.metrics.reporters',
      'auto.include.jmx.reporter',
    ]) {
      assert.ok(unused[0]!.includes(key), `${key} is not named in: ${unused[0]}`);
    }
    // The authorizer's keys are Brook's own now (they take effect with authorizer.class.name).
    assert.ok(!unused[0]!.includes('super.users'), unused[0]);
    // So are ZooKeeper's TLS keys (they take effect with zookeeper.ssl.client.enable=true).
    assert.ok(!unused[0]!.includes('zookeeper.ssl.client.enable'), unused[0]);
    assert.ok(!unused[0]!.includes('zookeeper.clientCnxnSocket'), unused[0]);
    assert.ok(!unused[0]!.includes('my.company.datacenter'));
    const unknown = lines.filter((l) => l.includes('my.company.datacenter'));
    assert.equal(unknown.length, 1, broker.log());
    assert.equal(lines.filter((l) => l.includes(' WARN ') && l.includes('config')).length, 2, broker.log());
  });

  it('AlterConfigs and IncrementalAlterConfigs accept keys Brook does not know on a broker, as Kafka', async () => {
    const altered = await client.call(ApiKey.ALTER_CONFIGS, 2, {
      resources: [
        { resourceType: BROKER, resourceName: '0', configs: [{ name: 'my.custom.setting', value: 'a' }] },
      ],
      validateOnly: false,
    });
    assert.equal(altered.responses[0].errorCode, ErrorCode.NONE, altered.responses[0].errorMessage);
    const incremental = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configs: [
            { name: 'my.custom.setting', configOperation: 0, value: 'b' },
            { name: 'sasl.kerberos.service.name', configOperation: 0, value: 'kafka' },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(incremental.responses[0].errorCode, ErrorCode.NONE, incremental.responses[0].errorMessage);
    const described = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER, resourceName: '0', configurationKeys: ['my.custom.setting'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const entry = described.results[0].configs[0];
    assert.equal(entry.name, 'my.custom.setting');
    assert.equal(entry.configSource, 2, 'DYNAMIC_BROKER_CONFIG');
    assert.equal(entry.isSensitive, true);
    // A list operation needs the key's type, which an unknown key does not have (Kafka: INVALID_CONFIG).
    const append = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configs: [{ name: 'my.custom.list', configOperation: 2, value: 'x' }],
        },
      ],
      validateOnly: false,
    });
    assert.equal(append.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
  });
});
