// DescribeConfigs of a broker lists Kafka's broker keys that Brook accepts without implementing them (SASL/Kerberos
// and login settings, KRaft and tiered storage keys, socket set-up timeouts...) as Kafka's ConfigHelper lists every
// KafkaConfig key: with Kafka 3.9's type and default (or the value set), the layer it comes from, read-only unless
// DynamicBrokerConfig changes it, and a password's value hidden. Kafka's internal keys appear only when set
// (AbstractConfig.nonInternalValues). Before, a tool asking for one of these keys got nothing, or, when it was set,
// a value hidden as if it were a secret.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigSource, ConfigType } from '../../../src/broker/config/config-types.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { startBroker } from '../../helpers/broker-process.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { BROKER_RESOURCE, incrementalAlter } from '../../helpers/dynamic-configs.js';

describe("DescribeConfigs of a broker lists Kafka's keys Brook accepts without implementing them", () => {
  const suite = useBrokerWithClient({ overrides: { 'sasl.kerberos.service.name': 'kafka' } });

  async function describeBroker(keys: string[] | null) {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER_RESOURCE, resourceName: '0', configurationKeys: keys }],
      includeSynonyms: true,
      includeDocumentation: true,
    });
    const result = response.results[0]!;
    assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
    return new Map(result.configs.map((c) => [c.name, c]));
  }

  test("each with Kafka 3.9's type and default or the value set, its source and Kafka's read-only flag", async () => {
    assert.deepEqual(
      await incrementalAlter(suite.client, BROKER_RESOURCE, '0', {
        'sasl.kerberos.ticket.renew.jitter': '0.1',
      }),
      [ErrorCode.NONE, null],
    );
    const configs = await describeBroker([
      'sasl.kerberos.service.name',
      'sasl.kerberos.kinit.cmd',
      'sasl.kerberos.ticket.renew.jitter',
      'socket.connection.setup.timeout.ms',
      'password.encoder.old.secret',
      'controller.quorum.voters',
      'request.timeout.ms',
      'remote.log.manager.task.retry.jitter',
    ]);
    const summary = Object.fromEntries(
      [...configs].map(([name, c]) => [
        name,
        [
          c.value,
          c.configSource,
          c.readOnly,
          c.isSensitive,
          c.configType,
          c.synonyms.map((s) => [s.value, s.source]),
        ],
      ]),
    );
    const S = ConfigSource;
    const T = ConfigType;
    assert.deepEqual(summary, {
      'sasl.kerberos.service.name': [
        'kafka',
        S.STATIC_BROKER_CONFIG,
        false,
        false,
        T.STRING,
        [['kafka', S.STATIC_BROKER_CONFIG]],
      ],
      'sasl.kerberos.kinit.cmd': [
        '/usr/bin/kinit',
        S.DEFAULT_CONFIG,
        false,
        false,
        T.STRING,
        [['/usr/bin/kinit', S.DEFAULT_CONFIG]],
      ],
      'sasl.kerberos.ticket.renew.jitter': [
        '0.1',
        S.DYNAMIC_BROKER_CONFIG,
        false,
        false,
        T.DOUBLE,
        [
          ['0.1', S.DYNAMIC_BROKER_CONFIG],
          ['0.05', S.DEFAULT_CONFIG],
        ],
      ],
      'socket.connection.setup.timeout.ms': [
        '10000',
        S.DEFAULT_CONFIG,
        true,
        false,
        T.LONG,
        [['10000', S.DEFAULT_CONFIG]],
      ],
      'password.encoder.old.secret': [null, S.DEFAULT_CONFIG, true, true, T.PASSWORD, []],
      'controller.quorum.voters': ['', S.DEFAULT_CONFIG, true, false, T.LIST, [['', S.DEFAULT_CONFIG]]],
      'request.timeout.ms': ['30000', S.DEFAULT_CONFIG, true, false, T.INT, [['30000', S.DEFAULT_CONFIG]]],
    });
    assert.ok(configs.get('sasl.kerberos.kinit.cmd')!.documentation !== null);
  });

  test('a description of every key holds them too, but not internal keys left unset', async () => {
    const configs = await describeBroker(null);
    for (const name of [
      'sasl.kerberos.kinit.cmd',
      'group.share.max.size',
      'remote.log.storage.system.enable',
    ]) {
      assert.ok(configs.has(name), name);
    }
    for (const name of ['unstable.api.versions.enable', 'remote.log.manager.task.retry.jitter']) {
      assert.ok(!configs.has(name), name);
    }
    assert.equal(configs.get('remote.log.storage.system.enable')!.value, 'false');
  });

  test("a static value Kafka's type refuses stops the broker, as Kafka's KafkaConfig refuses it", async () => {
    // A broker that did start is stopped before the assertion fails.
    const outcome = await startBroker({ overrides: { 'socket.connection.setup.timeout.ms': 'abc' } }).then(
      async (broker) => `started (stopped with ${await broker.stop()})`,
      (error: Error) => error.message,
    );
    assert.match(
      outcome,
      /Invalid value abc for configuration socket.connection.setup.timeout.ms: Not a number of type LONG/,
    );
  });
});

// Kafka's KafkaConfig.configType takes a listener-prefixed key's type from its base key (DynamicBrokerConfig's
// brokerConfigSynonyms: `listener.name.<l>.<key>`, or the SASL key a `<mechanism>.<key>` ends with), and lists the
// base key as a synonym. Before, such a key over a Kafka-only base was UNKNOWN, so its value was hidden as a secret.
describe('DescribeConfigs of a listener-prefixed Kafka-only key', () => {
  const suite = useBrokerWithClient({
    overrides: {
      'listener.name.plaintext.sasl.kerberos.service.name': 'kafka',
      'listener.name.plaintext.gssapi.sasl.login.class': 'com.example.Login',
      'listener.name.plaintext.sasl.login.refresh.window.factor': '0.9',
    },
  });

  test("has its base key's type and sensitivity, and the base key as a synonym", async () => {
    const response = await suite.client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER_RESOURCE, resourceName: '0', configurationKeys: null }],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    const result = response.results[0]!;
    assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
    const summary = Object.fromEntries(
      result.configs
        .filter((c) => c.name.startsWith('listener.name.'))
        .map((c) => [
          c.name,
          [
            c.value,
            c.readOnly,
            c.isSensitive,
            c.configType,
            c.synonyms.map((s) => [s.name, s.value, s.source]),
          ],
        ]),
    );
    const S = ConfigSource;
    const T = ConfigType;
    const key = 'listener.name.plaintext.';
    assert.deepEqual(summary, {
      [`${key}sasl.kerberos.service.name`]: [
        'kafka',
        true,
        false,
        T.STRING,
        [[`${key}sasl.kerberos.service.name`, 'kafka', S.STATIC_BROKER_CONFIG]],
      ],
      [`${key}gssapi.sasl.login.class`]: [
        'com.example.Login',
        true,
        false,
        T.CLASS,
        [[`${key}gssapi.sasl.login.class`, 'com.example.Login', S.STATIC_BROKER_CONFIG]],
      ],
      [`${key}sasl.login.refresh.window.factor`]: [
        '0.9',
        true,
        false,
        T.DOUBLE,
        [
          [`${key}sasl.login.refresh.window.factor`, '0.9', S.STATIC_BROKER_CONFIG],
          ['sasl.login.refresh.window.factor', '0.8', S.DEFAULT_CONFIG],
        ],
      ],
    });
  });
});
