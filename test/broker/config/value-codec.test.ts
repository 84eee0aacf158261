// Parsing and formatting of each config type, with Kafka's error wording.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../../src/broker/config/config-error.js';
import { ConfigType, Password } from '../../../src/broker/config/config-types.js';
import { formatConfigValue, parseConfigValue } from '../../../src/broker/config/value-codec.js';

function configError(key: string, fragment: string) {
  return (e: unknown) => e instanceof ConfigError && e.key === key && e.message.includes(fragment);
}

describe('config value parsing', () => {
  test('booleans are true or false in any case, trimmed', () => {
    assert.equal(parseConfigValue('b', ConfigType.BOOLEAN, ' TRUE '), true);
    assert.equal(parseConfigValue('b', ConfigType.BOOLEAN, 'False'), false);
    assert.throws(
      () => parseConfigValue('b', ConfigType.BOOLEAN, 'yes'),
      configError('b', 'either true or false'),
    );
  });

  test('ints must be whole numbers inside Java int range', () => {
    assert.equal(parseConfigValue('i', ConfigType.INT, ' +42 '), 42);
    assert.equal(parseConfigValue('i', ConfigType.INT, '-2147483648'), -2147483648);
    assert.throws(
      () => parseConfigValue('i', ConfigType.INT, '2147483648'),
      configError('i', 'Not a number of type INT'),
    );
    assert.throws(() => parseConfigValue('i', ConfigType.INT, '1.5'), configError('i', 'INT'));
    assert.throws(() => parseConfigValue('i', ConfigType.INT, '0x10'), configError('i', 'INT'));
    assert.throws(() => parseConfigValue('i', ConfigType.INT, ''), configError('i', 'INT'));
  });

  test('shorts are bounded by Java short range', () => {
    assert.equal(parseConfigValue('s', ConfigType.SHORT, '32767'), 32767);
    assert.throws(() => parseConfigValue('s', ConfigType.SHORT, '32768'), configError('s', 'SHORT'));
  });

  test('longs are bigint and keep Long.MAX_VALUE exactly', () => {
    assert.equal(parseConfigValue('l', ConfigType.LONG, '9223372036854775807'), 9223372036854775807n);
    assert.throws(
      () => parseConfigValue('l', ConfigType.LONG, '9223372036854775808'),
      configError('l', 'LONG'),
    );
  });

  test('doubles accept decimals and exponents and format like Java', () => {
    assert.equal(parseConfigValue('d', ConfigType.DOUBLE, '0.5'), 0.5);
    assert.equal(parseConfigValue('d', ConfigType.DOUBLE, '1e3'), 1000);
    assert.throws(() => parseConfigValue('d', ConfigType.DOUBLE, 'half'), configError('d', 'DOUBLE'));
    assert.equal(formatConfigValue(ConfigType.DOUBLE, 1), '1.0');
    assert.equal(formatConfigValue(ConfigType.DOUBLE, 0.9), '0.9');
    assert.equal(formatConfigValue(ConfigType.DOUBLE, Number.MAX_VALUE), '1.7976931348623157E308');
  });

  test('lists split on commas with surrounding spaces; empty text is an empty list', () => {
    assert.deepEqual(parseConfigValue('l', ConfigType.LIST, ' compact , delete '), ['compact', 'delete']);
    assert.deepEqual(parseConfigValue('l', ConfigType.LIST, '  '), []);
    assert.equal(formatConfigValue(ConfigType.LIST, ['a', 'b']), 'a,b');
  });

  test('passwords are wrapped so that printing them hides the text', () => {
    const p = parseConfigValue('p', ConfigType.PASSWORD, 'secret');
    assert.ok(p instanceof Password);
    assert.equal(String(p), '[hidden]');
    assert.equal(JSON.stringify({ p }), '{"p":"[hidden]"}');
    assert.equal((p as Password).value, 'secret');
  });

  test('null stays null', () => {
    assert.equal(parseConfigValue('x', ConfigType.INT, null), null);
    assert.equal(formatConfigValue(ConfigType.INT, null), null);
  });

  test("error messages follow Kafka's ConfigException wording", () => {
    assert.throws(() => parseConfigValue('num.partitions', ConfigType.INT, 'many'), {
      message: 'Invalid value many for configuration num.partitions: Not a number of type INT',
    });
  });
});
