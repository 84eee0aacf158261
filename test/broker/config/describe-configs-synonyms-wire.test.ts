// DescribeConfigs v4 with include_synonyms through the wire, compared against the lists Kafka's ConfigHelper
// gives for the same layers. Each expectation is derived by Kafka's rule, written out here so a reader can check
// it: take the key's broker synonym group, list every layer in turn (dynamic per-broker, dynamic default,
// static, Kafka's defaults) in the group's order, drop everything before the first entry of the key (for a topic
// key: of its first broker synonym), and put the topic override in front.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { DescribeConfigsResponse } from '../../../src/protocol/messages/32-describe-configs.js';
import { ApiKey } from '../../../src/protocol/registry.js';
import { useBrokerWithClient } from '../../helpers/broker-suite.js';
import { createTopic, type WireClient } from '../../helpers/wire-client.js';

const TOPIC = 2;
const BROKER = 4;
const S = { TOPIC: 1, DYNAMIC_BROKER: 2, DYNAMIC_DEFAULT: 3, STATIC: 4, DEFAULT: 5 } as const;

type Entry = [name: string, value: string | null, source: number];

interface Described {
  readonly value: string | null;
  readonly configSource: number;
  readonly synonyms: readonly Entry[];
  readonly documentation: string | null;
}

async function describeOne(
  client: WireClient,
  resourceType: number,
  resourceName: string,
  keys: readonly string[],
): Promise<Map<string, Described>> {
  const response = await client.call<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, 4, {
    resources: [{ resourceType, resourceName, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: true,
  });
  const result = response.results[0]!;
  assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? undefined);
  return new Map(
    result.configs.map((c) => [
      c.name,
      {
        value: c.value,
        configSource: c.configSource,
        synonyms: c.synonyms.map((s): Entry => [s.name, s.value, s.source]),
        documentation: c.documentation,
      },
    ]),
  );
}

describe('DescribeConfigs synonyms and sources as Kafka lists them', () => {
  const suite = useBrokerWithClient(
    {
      overrides: {
        'log.retention.ms': 3_600_000,
        'log.retention.minutes': 45,
        'log.retention.hours': 24,
        'log.roll.hours': 2,
        'log.cleanup.policy': 'delete',
      },
    },
    async ({ client }) => {
      await createTopic(client, 'with-override', { numPartitions: 1, configs: { 'retention.ms': '1000' } });
      await createTopic(client, 'plain', { numPartitions: 1 });
      const altered = await client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [
          {
            resourceType: BROKER,
            resourceName: '0',
            configs: [{ name: 'log.retention.ms', configOperation: 0, value: '1800000' }],
          },
          {
            resourceType: BROKER,
            resourceName: '',
            configs: [{ name: 'log.cleanup.policy', configOperation: 0, value: 'compact' }],
          },
        ],
        validateOnly: false,
      });
      for (const r of altered.responses) assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage);
    },
  );

  // The retention group across the layers, layer first (only log.retention.ms of the group is dynamic in Kafka).
  const retentionFromMs: Entry[] = [
    ['log.retention.ms', '1800000', S.DYNAMIC_BROKER],
    ['log.retention.ms', '3600000', S.STATIC],
    ['log.retention.minutes', '45', S.STATIC],
    ['log.retention.hours', '24', S.STATIC],
    ['log.retention.hours', '168', S.DEFAULT],
  ];

  test('a topic override comes first, then the broker group from the first log.retention.ms', async () => {
    const configs = await describeOne(suite.client, TOPIC, 'with-override', ['retention.ms']);
    assert.deepEqual(configs.get('retention.ms'), {
      value: '1000',
      configSource: S.TOPIC,
      synonyms: [['retention.ms', '1000', S.TOPIC], ...retentionFromMs],
      documentation: configs.get('retention.ms')?.documentation,
    });
    assert.match(configs.get('retention.ms')?.documentation ?? '', /-1/);
  });

  test('without an override the source is the first listed synonym, the value the one in force', async () => {
    const configs = await describeOne(suite.client, TOPIC, 'plain', [
      'retention.ms',
      'segment.ms',
      'flush.ms',
      'max.message.bytes',
      'cleanup.policy',
    ]);
    assert.deepEqual(
      [configs.get('retention.ms')?.value, configs.get('retention.ms')?.configSource],
      ['1800000', S.DYNAMIC_BROKER],
    );
    assert.deepEqual(configs.get('retention.ms')?.synonyms, retentionFromMs);
    // log.roll.hours is set but log.roll.ms nowhere: nothing is left, the source is DEFAULT_CONFIG.
    assert.deepEqual(
      [
        configs.get('segment.ms')?.value,
        configs.get('segment.ms')?.configSource,
        configs.get('segment.ms')?.synonyms,
      ],
      ['7200000', S.DEFAULT, []],
    );
    // log.flush.interval.ms has no default; only log.flush.scheduler.interval.ms has one, and it is dropped.
    assert.deepEqual(
      [
        configs.get('flush.ms')?.value,
        configs.get('flush.ms')?.configSource,
        configs.get('flush.ms')?.synonyms,
      ],
      ['9223372036854775807', S.DEFAULT, []],
    );
    assert.deepEqual(configs.get('max.message.bytes')?.synonyms, [
      ['message.max.bytes', '1048588', S.DEFAULT],
    ]);
    assert.deepEqual(
      [configs.get('cleanup.policy')?.value, configs.get('cleanup.policy')?.synonyms],
      [
        'compact',
        [
          ['log.cleanup.policy', 'compact', S.DYNAMIC_DEFAULT],
          ['log.cleanup.policy', 'delete', S.STATIC],
          ['log.cleanup.policy', 'delete', S.DEFAULT],
        ],
      ],
    );
  });

  test('broker keys list their group from themselves on; a key shadowed by a dynamic synonym has no value', async () => {
    const configs = await describeOne(suite.client, BROKER, '0', [
      'log.retention.ms',
      'log.retention.minutes',
      'log.retention.hours',
      'log.roll.ms',
    ]);
    assert.deepEqual(configs.get('log.retention.ms'), {
      value: '1800000',
      configSource: S.DYNAMIC_BROKER,
      synonyms: retentionFromMs,
      documentation: configs.get('log.retention.ms')?.documentation,
    });
    // Kafka's merged config drops the static synonyms of a dynamically set key.
    assert.deepEqual(
      [configs.get('log.retention.minutes')?.value, configs.get('log.retention.minutes')?.configSource],
      [null, S.STATIC],
    );
    assert.deepEqual(configs.get('log.retention.minutes')?.synonyms, retentionFromMs.slice(2));
    assert.deepEqual(configs.get('log.retention.hours')?.synonyms, retentionFromMs.slice(3));
    assert.deepEqual(
      [
        configs.get('log.roll.ms')?.value,
        configs.get('log.roll.ms')?.configSource,
        configs.get('log.roll.ms')?.synonyms,
      ],
      [null, S.DEFAULT, []],
    );
  });

  test('the cluster default resource lists only its own layer', async () => {
    const configs = await describeOne(suite.client, BROKER, '', []);
    assert.deepEqual([...configs.keys()], ['log.cleanup.policy']);
    assert.deepEqual(configs.get('log.cleanup.policy')?.synonyms, [
      ['log.cleanup.policy', 'compact', S.DYNAMIC_DEFAULT],
    ]);
  });

  test('keys Kafka cannot change dynamically are refused with INVALID_REQUEST and nothing is stored', async () => {
    const message = 'Cannot update these configs dynamically: Set(log.dirs, auto.include.jmx.reporter)';
    const legacy = await suite.client.call(ApiKey.ALTER_CONFIGS, 2, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configs: [
            { name: 'log.dirs', value: '/elsewhere' },
            { name: 'auto.include.jmx.reporter', value: 'true' },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      [legacy.responses[0].errorCode, legacy.responses[0].errorMessage],
      [ErrorCode.INVALID_REQUEST, message],
    );
    const incremental = await suite.client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configs: [
            { name: 'log.dirs', configOperation: 0, value: '/elsewhere' },
            { name: 'auto.include.jmx.reporter', configOperation: 0, value: 'true' },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      [incremental.responses[0].errorCode, incremental.responses[0].errorMessage],
      [ErrorCode.INVALID_REQUEST, message],
    );
    const configs = await describeOne(suite.client, BROKER, '0', ['log.dirs', 'auto.include.jmx.reporter']);
    assert.equal(configs.get('log.dirs')?.configSource, S.STATIC);
    // Kafka's key is described with Kafka's default, not the refused value.
    assert.equal(configs.get('auto.include.jmx.reporter')?.configSource, S.DEFAULT);
    // The dynamic value set before is still in force: the refused request did not replace the layer.
    const retention = await describeOne(suite.client, BROKER, '0', ['log.retention.ms']);
    assert.equal(retention.get('log.retention.ms')?.value, '1800000');
  });
});
