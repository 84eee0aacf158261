// DescribeConfigs' read_only flag for a broker, through the wire, as Kafka's ConfigHelper sets it: true for every
// name that is not in DynamicBrokerConfig.AllDynamicConfigs. That set holds plain names only, so a listener-prefixed
// key is read-only there even though AlterConfigs changes it per listener; and the broker quota keys (the
// replication throttle rates and replica.alter.log.dirs.io.max.bytes.per.second) live in DynamicConfig.Broker
// instead, so they are read-only in the answer as well, as are the lower-priority broker synonyms of topic configs
// (log.retention.hours, log.roll.hours: Kafka's DynamicBrokerReconfigurationTest expects read-only for both).
// Before the fix Brook answered false for all of them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';

const BROKER = 4;

describe("DescribeConfigs read_only for a broker's keys, as Kafka's", () => {
  const suite = useBrokerWithClient({
    overrides: {
      'listener.name.plaintext.max.connections': 500,
      'leader.replication.throttled.rate': 1_000_000,
    },
  });

  test('listener overrides and broker quota keys are read-only, plain dynamic keys are not', async () => {
    const expected: Record<string, boolean> = {
      'listener.name.plaintext.max.connections': true,
      'leader.replication.throttled.rate': true,
      'follower.replication.throttled.rate': true,
      'replica.alter.log.dirs.io.max.bytes.per.second': true,
      'max.connections': false,
      'log.retention.ms': false,
      'log.retention.minutes': true,
      'log.retention.hours': true,
      'log.roll.ms': false,
      'log.roll.hours': true,
      'log.roll.jitter.hours': true,
      'log.flush.interval.ms': false,
      'log.flush.scheduler.interval.ms': true,
      'ssl.keystore.location': false,
      'broker.id': true,
    };
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER, resourceName: '0', configurationKeys: Object.keys(expected) }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const result = response.results[0]!;
    assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
    const readOnly = Object.fromEntries(result.configs.map((c) => [c.name, c.readOnly]));
    assert.deepEqual(readOnly, expected);
  });
});
