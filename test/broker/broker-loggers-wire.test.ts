// BROKER_LOGGER resources (KIP-412, `kafka-configs --entity-type broker-loggers`) over the wire against a
// `brook server` process: DescribeConfigs lists its loggers with their levels, IncrementalAlterConfigs SETs and
// DELETEs a level and the broker's log follows at once, with Kafka's error codes for an unknown logger, an invalid
// level, the root logger, APPEND/SUBTRACT and another broker's id; legacy AlterConfigs refuses the resource type.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { useBrokerWithClient } from '../helpers/broker-suite.js';
import { waitUntil } from '../helpers/wait.js';
import { WireClient } from '../helpers/wire-client.js';

const BROKER_LOGGER = 8;
const DYNAMIC_BROKER_LOGGER_CONFIG = 6;
const Op = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

type Operation = { name: string; configOperation: number; value: string | null };

describe('broker loggers (KIP-412)', () => {
  const suite = useBrokerWithClient();

  async function describeLoggers(resourceName: string, keys: string[] | null = null) {
    const response = await suite.client.call(ApiKey.DESCRIBE_CONFIGS, 4, {
      resources: [{ resourceType: BROKER_LOGGER, resourceName, configurationKeys: keys }],
      includeSynonyms: true,
      includeDocumentation: true,
    });
    return response.results[0];
  }

  async function levels(keys: string[] | null = null): Promise<Map<string, string>> {
    const result = await describeLoggers('0', keys);
    assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage);
    return new Map(result.configs.map((c: { name: string; value: string }) => [c.name, c.value]));
  }

  async function alter(configs: Operation[], resourceName = '0', validateOnly = false) {
    const response = await suite.client.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
      resources: [{ resourceType: BROKER_LOGGER, resourceName, configs }],
      validateOnly,
    });
    const r = response.responses[0];
    return [r.errorCode, r.errorMessage];
  }

  /** Opens and closes a connection: the broker logs its acceptance at DEBUG through the logger `brook`. */
  async function connectOnce(): Promise<void> {
    const client = await WireClient.connect(suite.broker.host, suite.broker.port);
    await client.call(ApiKey.API_VERSIONS, 3, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' });
    client.close();
  }
  const accepted = () =>
    suite.broker
      .log()
      .split('\n')
      .filter((l) => l.includes('connection accepted')).length;

  it('describes the root and every logger with the level it writes at, in Kafka’s form', async () => {
    const result = await describeLoggers('0');
    assert.equal(result.errorCode, ErrorCode.NONE);
    const root = result.configs.find((c: { name: string }) => c.name === 'root');
    assert.deepEqual(root, {
      name: 'root',
      value: 'INFO',
      readOnly: false,
      isDefault: false,
      configSource: DYNAMIC_BROKER_LOGGER_CONFIG,
      isSensitive: false,
      synonyms: [],
      configType: 0,
      documentation: null,
    });
    const all = await levels();
    assert.equal(all.get('brook'), 'INFO');
    assert.equal(all.get('brook.controller'), 'INFO');
    // Named keys: those that exist; an unknown one is left out, as Kafka filters its list.
    assert.deepEqual([...(await levels(['brook', 'no.such.logger']))], [['brook', 'INFO']]);
    for (const [name, message] of [
      ['', 'Broker id must not be empty'],
      ['one', 'Broker id must be an integer, but it is: one'],
      ['7', 'Unexpected broker id, expected 0 but received 7'],
    ]) {
      const refused = await describeLoggers(name!);
      assert.deepEqual([refused.errorCode, refused.errorMessage], [ErrorCode.INVALID_REQUEST, message]);
    }
  });

  it('SET changes a level for the logger and those under it at once, DELETE gives it back its parent’s', async () => {
    const before = accepted();
    await connectOnce();
    assert.equal(accepted(), before, 'nothing at DEBUG while brook is at INFO');

    assert.deepEqual(await alter([{ name: 'brook', configOperation: Op.SET, value: 'DEBUG' }]), [
      ErrorCode.NONE,
      null,
    ]);
    const set = await levels(['root', 'brook', 'brook.controller']);
    assert.deepEqual(Object.fromEntries(set), { root: 'INFO', brook: 'DEBUG', 'brook.controller': 'DEBUG' });
    assert.match(suite.broker.log(), /WARN brook: Updated the log level of brook to DEBUG/);
    await connectOnce();
    await waitUntil(
      () => accepted() > before,
      5_000,
      () => suite.broker.log(),
    );

    assert.deepEqual(
      await alter([
        { name: 'brook.controller', configOperation: Op.SET, value: 'ERROR' },
        { name: 'brook', configOperation: Op.DELETE, value: null },
      ]),
      [ErrorCode.NONE, null],
    );
    const deleted = await levels(['brook', 'brook.controller']);
    assert.deepEqual(Object.fromEntries(deleted), { brook: 'INFO', 'brook.controller': 'ERROR' });
    const afterDelete = accepted();
    await connectOnce();
    assert.equal(accepted(), afterDelete, 'back at INFO, the connection is not logged');
    assert.deepEqual(await alter([{ name: 'brook.controller', configOperation: Op.DELETE, value: null }]), [
      ErrorCode.NONE,
      null,
    ]);
  });

  it('refuses what Kafka refuses, and changes nothing unless every operation is valid', async () => {
    const refusals: [Operation[], string, number, string][] = [
      [
        [{ name: 'no.such.logger', configOperation: Op.SET, value: 'INFO' }],
        '0',
        ErrorCode.INVALID_CONFIG,
        'Logger no.such.logger does not exist!',
      ],
      [
        [{ name: 'no.such.logger', configOperation: Op.DELETE, value: null }],
        '0',
        ErrorCode.INVALID_CONFIG,
        'Logger no.such.logger does not exist!',
      ],
      [
        [{ name: 'brook', configOperation: Op.SET, value: 'debug' }],
        '0',
        ErrorCode.INVALID_CONFIG,
        'Cannot set the log level of brook to debug as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN',
      ],
      [
        [{ name: 'root', configOperation: Op.DELETE, value: null }],
        '0',
        ErrorCode.INVALID_REQUEST,
        'Removing the log level of the root logger is not allowed',
      ],
      [
        [{ name: 'brook', configOperation: Op.APPEND, value: 'INFO' }],
        '0',
        ErrorCode.INVALID_REQUEST,
        'APPEND operation is not allowed for the BROKER_LOGGER resource',
      ],
      [
        [{ name: 'brook', configOperation: Op.SUBTRACT, value: 'INFO' }],
        '0',
        ErrorCode.INVALID_REQUEST,
        'SUBTRACT operation is not allowed for the BROKER_LOGGER resource',
      ],
      [
        [{ name: 'brook', configOperation: Op.SET, value: null }],
        '0',
        ErrorCode.INVALID_REQUEST,
        'Null value not supported for : brook',
      ],
      [
        [
          { name: 'brook', configOperation: Op.SET, value: 'WARN' },
          { name: 'brook', configOperation: Op.SET, value: 'ERROR' },
        ],
        '0',
        ErrorCode.INVALID_REQUEST,
        'Error due to duplicate config keys',
      ],
      [
        [{ name: 'brook', configOperation: Op.SET, value: 'WARN' }],
        '3',
        ErrorCode.INVALID_REQUEST,
        'Unexpected node id. Expected 0, but received 3',
      ],
      [
        [{ name: 'brook', configOperation: Op.SET, value: 'WARN' }],
        '',
        ErrorCode.INVALID_REQUEST,
        'Node id must be an integer, but it is: ',
      ],
      // A valid SET before an invalid one is not applied either: Kafka checks them all first.
      [
        [
          { name: 'brook', configOperation: Op.SET, value: 'WARN' },
          { name: 'brook.controller', configOperation: Op.SET, value: 'LOUD' },
        ],
        '0',
        ErrorCode.INVALID_CONFIG,
        'Cannot set the log level of brook.controller to LOUD as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN',
      ],
    ];
    for (const [operations, resourceName, errorCode, errorMessage] of refusals) {
      assert.deepEqual(
        await alter(operations, resourceName),
        [errorCode, errorMessage],
        JSON.stringify(operations),
      );
    }
    assert.deepEqual(await alter([{ name: 'brook', configOperation: Op.SET, value: 'TRACE' }], '0', true), [
      ErrorCode.NONE,
      null,
    ]);
    assert.deepEqual(Object.fromEntries(await levels(['brook', 'brook.controller'])), {
      brook: 'INFO',
      'brook.controller': 'INFO',
    });

    // Legacy AlterConfigs never took broker loggers (Kafka: INVALID_REQUEST, "Unknown resource type 8").
    const legacy = await suite.client.call(ApiKey.ALTER_CONFIGS, 2, {
      resources: [
        { resourceType: BROKER_LOGGER, resourceName: '0', configs: [{ name: 'brook', value: 'DEBUG' }] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      [legacy.responses[0].errorCode, legacy.responses[0].errorMessage],
      [ErrorCode.INVALID_REQUEST, 'Unknown resource type 8'],
    );
  });
});
