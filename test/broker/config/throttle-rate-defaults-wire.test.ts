// The replication throttle rates as cluster-wide defaults. Kafka defines leader.replication.throttled.rate,
// follower.replication.throttled.rate and replica.alter.log.dirs.io.max.bytes.per.second as dynamic broker quota
// configs outside DynamicBrokerConfig's per-broker set, so `kafka-configs.sh --entity-type brokers
// --entity-default --add-config leader.replication.throttled.rate=...` is accepted, and every broker without its
// own value takes the default (ConfigHandler's BrokerConfigHandler reads the broker's value, else the default).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT } from '../../helpers/dynamic-configs.js';

const RATES = [
  'follower.replication.throttled.rate',
  'leader.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
];
const DYNAMIC_BROKER = 2;
const DYNAMIC_DEFAULT = 3;

describe('replication throttle rates set as the cluster default', () => {
  const suite = useBrokerWithClient();

  async function described(resourceName: string): Promise<[string, string | null, number][]> {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER_RESOURCE, resourceName, configurationKeys: RATES }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const result = response.results[0]!;
    assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
    return result.configs.map((c) => [c.name, c.value, c.configSource]);
  }

  test('are accepted at the default and in force on a broker without its own value', async () => {
    const response = await suite.client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: BROKER_RESOURCE,
          resourceName: CLUSTER_DEFAULT,
          configs: RATES.map((name) => ({ name, configOperation: 0, value: '1048576' })),
        },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      [response.responses[0].errorCode, response.responses[0].errorMessage],
      [ErrorCode.NONE, null],
    );
    assert.deepEqual(
      await described(CLUSTER_DEFAULT),
      RATES.map((name) => [name, '1048576', DYNAMIC_DEFAULT]),
    );
    assert.deepEqual(
      await described('0'),
      RATES.map((name) => [name, '1048576', DYNAMIC_DEFAULT]),
    );
  });

  test("a broker's own value goes over the default", async () => {
    const response = await suite.client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: BROKER_RESOURCE,
          resourceName: '0',
          configs: [{ name: 'leader.replication.throttled.rate', configOperation: 0, value: '2048' }],
        },
      ],
      validateOnly: false,
    });
    assert.equal(response.responses[0].errorCode, ErrorCode.NONE, response.responses[0].errorMessage);
    assert.deepEqual(await described('0'), [
      ['follower.replication.throttled.rate', '1048576', DYNAMIC_DEFAULT],
      ['leader.replication.throttled.rate', '2048', DYNAMIC_BROKER],
      ['replica.alter.log.dirs.io.max.bytes.per.second', '1048576', DYNAMIC_DEFAULT],
    ]);
  });
});
