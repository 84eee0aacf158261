// metric.reporters on a Brook broker. Kafka loads each class it names, at startup (a class it cannot find stops the
// broker: "Class x cannot be found") and on a dynamic change (DynamicMetricsReporters.validateReconfiguration, whose
// failure DynamicBrokerConfig reports as "Validation of dynamic config update of Set(metric.reporters) failed with
// class class kafka.server.DynamicMetricsReporters", INVALID_REQUEST on the receiving broker). Brook runs no Java:
// a well-formed class name is accepted and has no effect, so a Kafka server.properties starts it unchanged; a name
// no JVM could load (not a Java class name, or an empty list entry) is refused in Kafka's words.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { startBroker } from '../../helpers/broker-process.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import {
  BROKER_RESOURCE,
  CLUSTER_DEFAULT,
  incrementalAlter,
  legacyAlter,
} from '../../helpers/dynamic-configs.js';

const REFUSED =
  'Validation of dynamic config update of Set(metric.reporters) failed with class class ' +
  'kafka.server.DynamicMetricsReporters';

describe('metric.reporters class names', () => {
  const suite = useBrokerWithClient({
    overrides: { 'metric.reporters': 'org.apache.kafka.common.metrics.JmxReporter' },
  });

  test('a dynamic change to a name no JVM could load is refused as Kafka refuses a class it cannot load', async () => {
    assert.deepEqual(
      await incrementalAlter(suite.client, BROKER_RESOURCE, '0', { 'metric.reporters': 'not a class' }),
      [ErrorCode.INVALID_REQUEST, REFUSED],
    );
    assert.deepEqual(
      await legacyAlter(suite.client, BROKER_RESOURCE, CLUSTER_DEFAULT, {
        'metric.reporters': 'com.example.Reporter,',
      }),
      [ErrorCode.INVALID_REQUEST, REFUSED],
    );
    assert.deepEqual(
      await incrementalAlter(suite.client, BROKER_RESOURCE, '0', {
        'metric.reporters': 'com..example.Reporter',
      }),
      [ErrorCode.INVALID_REQUEST, REFUSED],
    );
  });

  test('a dynamic change to well-formed class names is accepted', async () => {
    assert.deepEqual(
      await incrementalAlter(suite.client, BROKER_RESOURCE, '0', {
        'metric.reporters': 'org.apache.kafka.common.metrics.JmxReporter, com.example.Outer$Reporter',
      }),
      [ErrorCode.NONE, null],
    );
  });

  test('a broker whose static metric.reporters names no loadable class does not start', async () => {
    // A broker that did start is stopped before the assertion fails.
    const outcome = await startBroker({
      overrides: { 'metric.reporters': 'com.example.Reporter,1bad' },
    }).then(
      async (broker) => `started (stopped with ${await broker.stop()})`,
      (error: Error) => error.message,
    );
    assert.match(outcome, /Class 1bad cannot be found/);
  });
});
