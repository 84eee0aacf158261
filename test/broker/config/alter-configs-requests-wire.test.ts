// AlterConfigs and IncrementalAlterConfigs requests that Kafka refuses as a whole resource before looking at
// the values (ConfigAdminManager.preprocess, Kafka 3.9): a key named twice, or a value left null where one is
// needed. Through the wire against one broker; each refused change leaves the stored overrides as they were.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { TOPIC_RESOURCE } from '../../helpers/dynamic-configs.js';
import { createTopic, type WireClient } from '../../helpers/wire-client.js';

const TOPIC = 'requests';
const SET = 0;
const DELETE = 1;
const APPEND = 2;

/** The topic's overrides (DYNAMIC_TOPIC_CONFIG entries) as DescribeConfigs lists them. */
async function overrides(client: WireClient): Promise<Record<string, string | null>> {
  const response = await client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
    resources: [{ resourceType: TOPIC_RESOURCE, resourceName: TOPIC, configurationKeys: null }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const result = response.results[0]!;
  assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
  return Object.fromEntries(result.configs.filter((c) => c.configSource === 1).map((c) => [c.name, c.value]));
}

describe('config change requests Kafka refuses before their values', () => {
  const suite = useBrokerWithClient({}, async ({ client }) => {
    await createTopic(client, TOPIC, { numPartitions: 1, configs: { 'retention.ms': '1000' } });
  });

  async function legacy(configs: { name: string; value: string | null }[]) {
    const response = await suite.client.call(ApiKey.ALTER_CONFIGS, 2, {
      resources: [{ resourceType: TOPIC_RESOURCE, resourceName: TOPIC, configs }],
      validateOnly: false,
    });
    const r = response.responses[0];
    return [r.errorCode, r.errorMessage];
  }

  test('legacy AlterConfigs with a null value is INVALID_REQUEST naming every such key', async () => {
    const answer = await legacy([
      { name: 'segment.ms', value: null },
      { name: 'cleanup.policy', value: 'compact' },
      { name: 'retention.bytes', value: null },
    ]);
    assert.deepEqual(answer, [
      ErrorCode.INVALID_REQUEST,
      'Null value not supported for : segment.ms, retention.bytes',
    ]);
    assert.deepEqual(await overrides(suite.client), { 'retention.ms': '1000' });
  });

  test('legacy AlterConfigs naming a key twice is INVALID_REQUEST', async () => {
    const answer = await legacy([
      { name: 'retention.ms', value: '2000' },
      { name: 'retention.ms', value: '3000' },
    ]);
    assert.deepEqual(answer, [ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys']);
    assert.deepEqual(await overrides(suite.client), { 'retention.ms': '1000' });
  });

  test('IncrementalAlterConfigs: the same refusals, before the topic is looked up', async () => {
    const incremental = async (resourceName: string, configs: unknown[]) => {
      const response = await suite.client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [{ resourceType: TOPIC_RESOURCE, resourceName, configs }],
        validateOnly: false,
      });
      const r = response.responses[0];
      return [r.errorCode, r.errorMessage];
    };
    const nulls = [
      { name: 'segment.ms', configOperation: SET, value: null },
      { name: 'retention.ms', configOperation: DELETE, value: null },
      { name: 'cleanup.policy', configOperation: APPEND, value: null },
    ];
    const nullAnswer = [
      ErrorCode.INVALID_REQUEST,
      'Null value not supported for : segment.ms, cleanup.policy',
    ];
    assert.deepEqual(await incremental(TOPIC, nulls), nullAnswer);
    assert.deepEqual(await incremental('no-such-topic', nulls), nullAnswer);
    const twice = [
      { name: 'retention.ms', configOperation: SET, value: '5' },
      { name: 'retention.ms', configOperation: DELETE, value: null },
    ];
    const twiceAnswer = [ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys'];
    assert.deepEqual(await incremental(TOPIC, twice), twiceAnswer);
    assert.deepEqual(await incremental('no-such-topic', twice), twiceAnswer);
    assert.deepEqual(await overrides(suite.client), { 'retention.ms': '1000' });
  });

  test('legacy AlterConfigs still replaces the whole set of overrides', async () => {
    assert.deepEqual(await legacy([{ name: 'cleanup.policy', value: 'compact' }]), [ErrorCode.NONE, null]);
    assert.deepEqual(await overrides(suite.client), { 'cleanup.policy': 'compact' });
  });
});
