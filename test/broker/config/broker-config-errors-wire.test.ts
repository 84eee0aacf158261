// The errors a broker config change gets through the wire. Kafka 3.9 validates a BROKER resource of either
// AlterConfigs request on the receiving broker (ConfigAdminManager.preprocess), and whatever
// DynamicBrokerConfig.validate refuses there (a bad value, a key that cannot change dynamically, a thread count
// out of bounds) becomes INVALID_REQUEST with the refusal's own text (KAFKA-13609), which Kafka's
// DynamicBrokerReconfigurationTest expects of every refused reconfiguration. Nothing refused is stored.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import {
  BROKER_RESOURCE,
  CLUSTER_DEFAULT,
  incrementalAlter,
  legacyAlter,
} from '../../helpers/dynamic-configs.js';

describe('broker config change errors as Kafka 3.9 answers them', () => {
  const suite = useBrokerWithClient();

  const incremental = (resourceName: string, configs: Record<string, string>) =>
    incrementalAlter(suite.client, BROKER_RESOURCE, resourceName, configs);
  const legacy = (resourceName: string, configs: Record<string, string>) =>
    legacyAlter(suite.client, BROKER_RESOURCE, resourceName, configs);

  /** The dynamic (per-broker or default) layer's keys that DescribeConfigs of broker 0 lists. */
  async function dynamicKeys(): Promise<string[]> {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER_RESOURCE, resourceName: '0', configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    return response.results[0]!.configs.filter((c) => c.configSource === 2 || c.configSource === 3).map(
      (c) => c.name,
    );
  }

  test('a bad value is INVALID_REQUEST with the value refusal as it is', async () => {
    const notInt = 'Invalid value abc for configuration log.cleaner.threads: Not a number of type INT';
    assert.deepEqual(await incremental('0', { 'log.cleaner.threads': 'abc' }), [
      ErrorCode.INVALID_REQUEST,
      notInt,
    ]);
    assert.deepEqual(await legacy(CLUSTER_DEFAULT, { 'log.cleaner.threads': 'abc' }), [
      ErrorCode.INVALID_REQUEST,
      notInt,
    ]);
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, { 'log.retention.bytes': 'x' }), [
      ErrorCode.INVALID_REQUEST,
      'Invalid value x for configuration log.retention.bytes: Not a number of type LONG',
    ]);
    // Kafka checks the values before it refuses per-broker keys at the cluster default.
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, { 'ssl.client.auth': 'bogus' }), [
      ErrorCode.INVALID_REQUEST,
      'Invalid value bogus for configuration ssl.client.auth: String must be one of: required, requested, none',
    ]);
    assert.deepEqual(await dynamicKeys(), []);
  });

  test("DynamicBrokerConfig's refusals keep their own text", async () => {
    assert.deepEqual(await incremental('0', { 'log.dirs': '/elsewhere' }), [
      ErrorCode.INVALID_REQUEST,
      'Cannot update these configs dynamically: Set(log.dirs)',
    ]);
    assert.deepEqual(await legacy(CLUSTER_DEFAULT, { 'advertised.listeners': 'PLAINTEXT://127.0.0.1:1' }), [
      ErrorCode.INVALID_REQUEST,
      'Cannot update these configs at default cluster level, broker id must be specified: Set(advertised.listeners)',
    ]);
    // KafkaConfig's requirements, in Scala's words for a failed require: the retention in force (0 ms is neither
    // unlimited nor a retention), the dedupe buffer per cleaner thread (integer division), per-ip limits.
    const retention = [
      ErrorCode.INVALID_REQUEST,
      'requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1',
    ];
    assert.deepEqual(await incremental('0', { 'log.retention.ms': '0' }), retention);
    assert.deepEqual(await legacy(CLUSTER_DEFAULT, { 'log.retention.ms': '0' }), retention);
    assert.deepEqual(
      await incremental('0', { 'log.cleaner.threads': '2', 'log.cleaner.dedupe.buffer.size': '2097153' }),
      [
        ErrorCode.INVALID_REQUEST,
        'requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.',
      ],
    );
    assert.deepEqual(await incremental(CLUSTER_DEFAULT, { 'max.connections.per.ip': '0' }), [
      ErrorCode.INVALID_REQUEST,
      'requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides ' +
        'property is set.',
    ]);
    const [code, message] = await incremental(CLUSTER_DEFAULT, { 'num.replica.fetchers': '5' });
    assert.equal(code, ErrorCode.INVALID_REQUEST);
    assert.match(String(message), /num\.replica\.fetchers=5, value should not be greater than double/);
    assert.deepEqual(await dynamicKeys(), []);
  });

  test("another broker's id is refused in ConfigAdminManager's words", async () => {
    const change = { 'log.cleaner.threads': '2' };
    const other = [ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 0, but received 1'];
    assert.deepEqual(await incremental('1', change), other);
    assert.deepEqual(await legacy('1', change), other);
    const notId = [ErrorCode.INVALID_REQUEST, 'Node id must be an integer, but it is: abc'];
    assert.deepEqual(await incremental('abc', change), notId);
    assert.deepEqual(await legacy('abc', change), notId);
  });
});
