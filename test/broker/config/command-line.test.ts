// The --config/--override command line and loading a properties file into a BrokerConfig.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { applyOverrides, parseConfigArgs, parseOverride } from '../../../src/broker/config/command-line.js';
import { ConfigError } from '../../../src/broker/config/config-error.js';
import { loadBrokerConfig } from '../../../src/broker/config/load-broker-config.js';

describe('config command line', () => {
  test('--config, a bare file argument and repeated --override', () => {
    const a = parseConfigArgs([
      '--config',
      'server.properties',
      '--override',
      'num.partitions=3',
      '--override=a=b=c',
      '--verbose',
    ]);
    assert.equal(a.configPath, 'server.properties');
    assert.deepEqual(
      [...a.overrides],
      [
        ['num.partitions', '3'],
        ['a', 'b=c'],
      ],
    );
    assert.deepEqual(a.rest, ['--verbose']);
    assert.equal(parseConfigArgs(['my.properties']).configPath, 'my.properties');
  });

  test('an override needs key=value; an empty value is allowed', () => {
    assert.deepEqual(parseOverride('k='), ['k', '']);
    assert.throws(() => parseOverride('novalue'), ConfigError);
    assert.throws(() => parseOverride('=v'), ConfigError);
    assert.throws(() => parseConfigArgs(['--override']), ConfigError);
  });

  test('overrides win over the file', () => {
    const merged = applyOverrides(
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
      new Map([['b', '3']]),
    );
    assert.deepEqual(
      [...merged],
      [
        ['a', '1'],
        ['b', '3'],
      ],
    );
  });
});

describe('loading a broker config file', () => {
  test('config/server.properties (what npm start uses) gives the single-node settings', async () => {
    const here = fileURLToPath(new URL('.', import.meta.url));
    // Compiled tests live under dist-*/test/broker/config; the sample is in the source tree.
    const sample = join(here, '..', '..', '..', '..', 'config', 'server.properties');
    const warnings: string[] = [];
    const { config, staticConfig } = await loadBrokerConfig({
      configPath: sample,
      overrides: new Map(),
      warn: (m) => warnings.push(m),
    });
    assert.equal(config.brokerId, 0);
    assert.deepEqual(config.listeners, [
      { name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' },
    ]);
    assert.deepEqual(config.logDirs, ['./data']);
    assert.equal(config.numPartitions, 1);
    assert.equal(config.offsetsTopicReplicationFactor, 1);
    assert.equal(config.transactionStateLogReplicationFactor, 1);
    assert.equal(config.transactionStateLogMinIsr, 1);
    assert.equal(config.groupInitialRebalanceDelayMs, 0);
    assert.equal(config.zookeeperConnect, null);
    // npm start serves the web console and the metrics endpoint with no extra step.
    assert.equal(staticConfig.get('brook.console.listener'), 'http://127.0.0.1:9021');
    assert.equal(staticConfig.get('brook.metrics.listener'), 'http://127.0.0.1:9404');
    assert.deepEqual(warnings, []);
  });

  test('overrides apply on top of the file and unknown keys are reported once each', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brook-config-'));
    try {
      const path = join(dir, 'server.properties');
      await writeFile(path, 'num.partitions=2\nmystery.key=1\nmystery.key=2\n');
      const warnings: string[] = [];
      const { config, staticConfig } = await loadBrokerConfig({
        configPath: path,
        overrides: new Map([['num.partitions', '6']]),
        warn: (m) => warnings.push(m),
      });
      assert.equal(config.numPartitions, 6);
      assert.equal(staticConfig.get('mystery.key'), '2');
      assert.equal(warnings.length, 1);
      assert.ok(warnings[0]?.includes('mystery.key'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a syntax error in the file is a ConfigError naming the file and line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brook-config-'));
    try {
      const path = join(dir, 'server.properties');
      await writeFile(path, 'ok=1\nbad=\\uZZZZ\n');
      await assert.rejects(
        loadBrokerConfig({ configPath: path, overrides: new Map(), warn: () => {} }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(path) && e.message.includes('line 2'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a bad value in the file is an error naming the key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'brook-config-'));
    try {
      const path = join(dir, 'server.properties');
      await writeFile(path, 'log.segment.bytes = 10\n');
      await assert.rejects(
        loadBrokerConfig({ configPath: path, overrides: new Map(), warn: () => {} }),
        (e: unknown) =>
          e instanceof ConfigError && e.key === 'log.segment.bytes' && e.message.includes('at least 14'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
