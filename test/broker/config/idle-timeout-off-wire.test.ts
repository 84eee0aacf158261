// connections.max.idle.ms below 0 turns the idle timeout off in Kafka, which then skips its rule that
// connection.failed.authentication.delay.ms stays below the idle timeout: a broker starts with it and keeps an idle
// connection open.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';

describe('connections.max.idle.ms -1, as in Kafka', () => {
  const suite = useBrokerWithClient({ overrides: { 'connections.max.idle.ms': '-1' } });

  test('starts the broker, which describes it and keeps an idle connection', async () => {
    await sleep(200);
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: 4, resourceName: '0', configurationKeys: ['connections.max.idle.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const result = response.results[0]!;
    assert.equal(result.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      result.configs.map((c) => [c.name, c.value]),
      [['connections.max.idle.ms', '-1']],
    );
  });
});
