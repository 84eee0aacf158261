// Kafka 3.9's tiered storage topic keys over the wire, answered as a Kafka 3.9 broker in ZooKeeper mode without
// tiered storage (remote.log.storage.system.enable=false) answers them: local.retention.ms/.bytes and the
// KIP-950 switches set to false are accepted, stored and described (tools that copy a topic's configs from a
// Kafka 3.9 cluster send them); the switches set to true, and remote.storage.enable=true, are INVALID_CONFIG.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import type { WireClient } from '../../helpers/wire-client.js';

const TOPIC = 2;
const SET = 0;
const S = { TOPIC: 1, DEFAULT: 5 } as const;
const LONG = 5;
const TIERED_KEYS = [
  'local.retention.bytes',
  'local.retention.ms',
  'remote.log.copy.disable',
  'remote.log.delete.on.disable',
  'remote.storage.enable',
];

async function create(client: WireClient, name: string, configs: { name: string; value: string }[]) {
  const response = await client.call(ApiKey.CREATE_TOPICS, 5, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  return response.topics[0] as { errorCode: number; errorMessage: string | null };
}

async function describeTiered(client: WireClient, topic: string) {
  const response = await client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
    resources: [{ resourceType: TOPIC, resourceName: topic, configurationKeys: TIERED_KEYS }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  assert.equal(response.results[0].errorCode, ErrorCode.NONE);
  return response.results[0].configs.map(
    (c: { name: string; value: string; configSource: number; configType: number }) => [
      c.name,
      c.value,
      c.configSource,
      c.configType,
    ],
  );
}

async function setTopicConfig(client: WireClient, topic: string, name: string, value: string) {
  const response = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
    resources: [
      { resourceType: TOPIC, resourceName: topic, configs: [{ name, configOperation: SET, value }] },
    ],
    validateOnly: false,
  });
  return response.responses[0] as { errorCode: number; errorMessage: string | null };
}

describe("Kafka 3.9's tiered storage topic keys on a broker without tiered storage", () => {
  const suite = useBrokerWithClient();

  it('accepts the values a Kafka 3.9 ZooKeeper broker without tiered storage accepts, and describes them', async () => {
    const { client } = suite;
    const made = await create(client, 'tiered-copied', [
      { name: 'local.retention.ms', value: '3600000' },
      { name: 'local.retention.bytes', value: '-2' },
      { name: 'remote.log.copy.disable', value: 'false' },
      { name: 'remote.log.delete.on.disable', value: 'false' },
      { name: 'remote.storage.enable', value: 'false' },
    ]);
    assert.equal(made.errorCode, ErrorCode.NONE, made.errorMessage ?? undefined);
    assert.deepEqual(await describeTiered(client, 'tiered-copied'), [
      ['local.retention.bytes', '-2', S.TOPIC, LONG],
      ['local.retention.ms', '3600000', S.TOPIC, LONG],
      ['remote.log.copy.disable', 'false', S.TOPIC, 1],
      ['remote.log.delete.on.disable', 'false', S.TOPIC, 1],
      ['remote.storage.enable', 'false', S.TOPIC, 1],
    ]);

    const plain = await create(client, 'tiered-plain', []);
    assert.equal(plain.errorCode, ErrorCode.NONE);
    assert.deepEqual(await describeTiered(client, 'tiered-plain'), [
      ['local.retention.bytes', '-2', S.DEFAULT, LONG],
      ['local.retention.ms', '-2', S.DEFAULT, LONG],
      ['remote.log.copy.disable', 'false', S.DEFAULT, 1],
      ['remote.log.delete.on.disable', 'false', S.DEFAULT, 1],
      ['remote.storage.enable', 'false', S.DEFAULT, 1],
    ]);
    const altered = await setTopicConfig(client, 'tiered-plain', 'local.retention.bytes', '1048576');
    assert.equal(altered.errorCode, ErrorCode.NONE, altered.errorMessage ?? undefined);
    assert.deepEqual((await describeTiered(client, 'tiered-plain'))[0], [
      'local.retention.bytes',
      '1048576',
      S.TOPIC,
      LONG,
    ]);
  });

  it("refuses what Kafka refuses there, with Kafka's words", async () => {
    const { client } = suite;
    const zkMode =
      "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under Zookeeper's mode.";
    const tieredOff =
      'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.';
    for (const name of ['remote.log.copy.disable', 'remote.log.delete.on.disable']) {
      const refused = await create(client, `tiered-${name}`, [{ name, value: 'true' }]);
      assert.deepEqual([refused.errorCode, refused.errorMessage], [ErrorCode.INVALID_CONFIG, zkMode]);
      const altered = await setTopicConfig(client, 'tiered-plain', name, 'true');
      assert.deepEqual([altered.errorCode, altered.errorMessage], [ErrorCode.INVALID_CONFIG, zkMode]);
    }
    const enabled = await create(client, 'tiered-enabled', [
      { name: 'remote.storage.enable', value: 'true' },
    ]);
    assert.deepEqual([enabled.errorCode, enabled.errorMessage], [ErrorCode.INVALID_CONFIG, tieredOff]);
    const below = await create(client, 'tiered-below', [{ name: 'local.retention.ms', value: '-3' }]);
    assert.equal(below.errorCode, ErrorCode.INVALID_CONFIG);
  });
});
