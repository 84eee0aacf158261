// The errors a topic config change gets through the wire, in Kafka 3.9's words (ZkAdminManager): a bad value is
// INVALID_CONFIG naming the resource in front of the ConfigException's text, a broken rule between keys (Kafka's
// InvalidConfigurationException) keeps its own text, and CreateTopics passes the value's text on unchanged. And
// the topic names the config requests refuse: ConfigHelper's Topic.validate for DescribeConfigs, ZkAdminManager's
// checks for the alterations.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { incrementalAlter, legacyAlter, TOPIC_RESOURCE } from '../../helpers/dynamic-configs.js';
import { createTopic } from '../../helpers/wire-client.js';

const TOPIC = 'errors';
const PREFIX = `Invalid config value for resource ConfigResource(type=TOPIC, name='${TOPIC}'): `;

describe('topic config change errors as Kafka words them', () => {
  const suite = useBrokerWithClient({}, async ({ client }) => {
    await createTopic(client, TOPIC, { numPartitions: 1 });
  });

  const incremental = (resourceName: string, configs: Record<string, string>) =>
    incrementalAlter(suite.client, TOPIC_RESOURCE, resourceName, configs);
  const legacy = (resourceName: string, configs: Record<string, string>) =>
    legacyAlter(suite.client, TOPIC_RESOURCE, resourceName, configs);

  test('a bad value is INVALID_CONFIG naming the resource, in both requests', async () => {
    const notLong = 'Invalid value abc for configuration retention.ms: Not a number of type LONG';
    assert.deepEqual(await incremental(TOPIC, { 'retention.ms': 'abc' }), [
      ErrorCode.INVALID_CONFIG,
      PREFIX + notLong,
    ]);
    assert.deepEqual(await legacy(TOPIC, { 'retention.ms': 'abc' }), [
      ErrorCode.INVALID_CONFIG,
      PREFIX + notLong,
    ]);
    assert.deepEqual(await incremental(TOPIC, { 'min.insync.replicas': '0' }), [
      ErrorCode.INVALID_CONFIG,
      `${PREFIX}Invalid value 0 for configuration min.insync.replicas: Value must be at least 1`,
    ]);
  });

  test("an unknown key and a broken rule between keys keep Kafka's own text", async () => {
    assert.deepEqual(await incremental(TOPIC, { 'no.such.key': '1' }), [
      ErrorCode.INVALID_CONFIG,
      'Unknown topic config name: no.such.key',
    ]);
    assert.deepEqual(
      await incremental(TOPIC, { 'min.compaction.lag.ms': '500', 'max.compaction.lag.ms': '100' }),
      [
        ErrorCode.INVALID_CONFIG,
        'conflict topic config setting min.compaction.lag.ms (500) > max.compaction.lag.ms (100)',
      ],
    );
  });

  test("CreateTopics gives the value's text without the resource", async () => {
    const response = await suite.client.call(ApiKey.CREATE_TOPICS, 5, {
      topics: [
        {
          name: 'errors-created',
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: [{ name: 'retention.ms', value: 'abc' }],
        },
      ],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    assert.deepEqual(
      [response.topics[0].errorCode, response.topics[0].errorMessage],
      [
        ErrorCode.INVALID_CONFIG,
        'Invalid value abc for configuration retention.ms: Not a number of type LONG',
      ],
    );
  });

  test('DescribeConfigs: an illegal name is INVALID_TOPIC_EXCEPTION, a missing topic has no message', async () => {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: ['', 'bad/name', 'no-such-topic'].map((resourceName) => ({
        resourceType: TOPIC_RESOURCE,
        resourceName,
        configurationKeys: null,
      })),
      includeSynonyms: false,
      includeDocumentation: false,
    });
    assert.deepEqual(
      response.results.map((r) => [r.resourceName, r.errorCode, r.errorMessage, r.configs.length]),
      [
        ['', ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty", 0],
        [
          'bad/name',
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          `Topic name "bad/name" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
          0,
        ],
        ['no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null, 0],
      ],
    );
  });

  test('alterations: the default topic resource "" is INVALID_REQUEST, a missing topic named', async () => {
    const change = { 'retention.ms': '5000' };
    const defaultTopic = [ErrorCode.INVALID_REQUEST, 'Default topic resources are not allowed.'];
    assert.deepEqual(await incremental('', change), defaultTopic);
    assert.deepEqual(await legacy('', change), defaultTopic);
    const missing = [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'no-such-topic' does not exist."];
    assert.deepEqual(await incremental('no-such-topic', change), missing);
    assert.deepEqual(await legacy('no-such-topic', change), missing);
  });
});
