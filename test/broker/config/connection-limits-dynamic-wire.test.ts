// A listener's connection limits may be set to 0 in the static config, but Kafka 3.9 refuses 0 as a dynamic
// change: each listener's ConnectionQuotas.validateReconfiguration checks the listener's new max.connections and
// max.connection.creation.rate (its listener.name.<l>. value over the broker's) when either changes, and answers
// "Invalid max.connections 0". Brook answers the same, so that a change refused by Kafka is not accepted here.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { BROKER_RESOURCE, CLUSTER_DEFAULT, incrementalAlter } from '../../helpers/dynamic-configs.js';

describe('dynamic connection limits of a listener are at least 1, as in Kafka 3.9', () => {
  const suite = useBrokerWithClient();
  const incremental = (resourceName: string, configs: Record<string, string | null>) =>
    incrementalAlter(suite.client, BROKER_RESOURCE, resourceName, configs);

  test('0 is refused, broker-wide and per listener; a positive limit is taken', async () => {
    const cases: [resource: string, name: string, base: string][] = [
      [CLUSTER_DEFAULT, 'max.connections', 'max.connections'],
      ['0', 'max.connection.creation.rate', 'max.connection.creation.rate'],
      ['0', 'listener.name.plaintext.max.connections', 'max.connections'],
      [
        CLUSTER_DEFAULT,
        'listener.name.plaintext.max.connection.creation.rate',
        'max.connection.creation.rate',
      ],
    ];
    for (const [resource, name, base] of cases) {
      assert.deepEqual(
        await incremental(resource, { [name]: '0' }),
        [ErrorCode.INVALID_REQUEST, `Invalid ${base} 0`],
        name,
      );
      assert.deepEqual(await incremental(resource, { [name]: '1000' }), [ErrorCode.NONE, null], name);
      assert.deepEqual(await incremental(resource, { [name]: null }), [ErrorCode.NONE, null], name);
    }
  });
});
