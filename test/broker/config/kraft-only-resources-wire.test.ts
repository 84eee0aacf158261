// Config resources a Kafka 3.9 broker in ZooKeeper mode has no store for: CLIENT_METRICS (16, KIP-714
// subscriptions). DescribeConfigs answers them INVALID_REQUEST as Kafka's ZkConfigRepository refuses them ("... is
// only supported on KRaft clusters", after ConfigHelper's empty-name check); IncrementalAlterConfigs as
// ZkAdminManager does ("AlterConfigs is only supported for topics and brokers"). GROUP (32, KIP-848 group configs)
// came with Kafka 4.0: Kafka 3.9's ConfigHelper fails a DescribeConfigs naming it as a whole, and its
// ConfigAdminManager.preprocess refuses it in an alteration ("Unknown resource type 32").

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import type { IncrementalAlterConfigsResponse } from '../../../src/protocol/messages/44-incremental-alter-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';

const CLIENT_METRICS = 16;
const GROUP = 32;

describe('group and client-metrics config resources on a ZooKeeper-mode broker', () => {
  const suite = useBrokerWithClient();

  test("DescribeConfigs refuses them in Kafka's words", async () => {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: CLIENT_METRICS, resourceName: 'subscription', configurationKeys: null },
        { resourceType: CLIENT_METRICS, resourceName: '', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      response.results.map((r) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage]),
      [
        [
          CLIENT_METRICS,
          'subscription',
          ErrorCode.INVALID_REQUEST,
          'Config type client-metrics is only supported on KRaft clusters',
        ],
        [CLIENT_METRICS, '', ErrorCode.INVALID_REQUEST, 'Client metrics subscription name must not be empty'],
      ],
    );
  });

  test('DescribeConfigs naming a GROUP resource fails as a whole, as Kafka 3.9 does', async () => {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [
        { resourceType: 2, resourceName: '__consumer_offsets', configurationKeys: null },
        { resourceType: GROUP, resourceName: 'g', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      response.results.map((r) => [r.resourceType, r.errorCode, r.configs.length]),
      [
        [2, ErrorCode.INVALID_REQUEST, 0],
        [GROUP, ErrorCode.INVALID_REQUEST, 0],
      ],
    );
    assert.match(
      response.results[0]?.errorMessage ?? '',
      /^This most likely occurs because of a request being/,
    );
  });

  test("IncrementalAlterConfigs refuses them in Kafka's words", async () => {
    const response = await suite.client.call<IncrementalAlterConfigsResponse>(
      ApiKey.INCREMENTAL_ALTER_CONFIGS,
      1,
      {
        resources: [GROUP, CLIENT_METRICS].map((resourceType) => ({
          resourceType,
          resourceName: 'g',
          configs: [{ name: 'consumer.session.timeout.ms', configOperation: 0, value: '50000' }],
        })),
        validateOnly: false,
      },
    );
    assert.deepEqual(
      response.responses.map((r) => [r.resourceType, r.errorCode, r.errorMessage]),
      [
        [GROUP, ErrorCode.INVALID_REQUEST, 'Unknown resource type 32'],
        [
          CLIENT_METRICS,
          ErrorCode.INVALID_REQUEST,
          'AlterConfigs is only supported for topics and brokers, but resource type is CLIENT_METRICS',
        ],
      ],
    );
  });
});
