// Text <-> typed value for each config type, following Kafka's ConfigDef rules: surrounding whitespace is
// trimmed, booleans are true/false in any case, numbers must fit their Java type, lists are comma-separated
// with spaces around commas ignored. formatConfigValue is the inverse used for DescribeConfigs values.

import { assert } from '../../common/assert.js';
import { ConfigError } from './config-error.js';
import { ConfigType, type ConfigValue, Password } from './config-types.js';

const INTEGER_PATTERN = /^[+-]?\d+$/;
const DOUBLE_PATTERN = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$/;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const SHORT_MIN = -(2 ** 15);
const SHORT_MAX = 2 ** 15 - 1;
export const LONG_MIN = -(2n ** 63n);
export const LONG_MAX = 2n ** 63n - 1n;

const TYPE_NAMES: Record<number, string> = {
  [ConfigType.BOOLEAN]: 'BOOLEAN',
  [ConfigType.STRING]: 'STRING',
  [ConfigType.INT]: 'INT',
  [ConfigType.SHORT]: 'SHORT',
  [ConfigType.LONG]: 'LONG',
  [ConfigType.DOUBLE]: 'DOUBLE',
  [ConfigType.LIST]: 'LIST',
  [ConfigType.CLASS]: 'CLASS',
  [ConfigType.PASSWORD]: 'PASSWORD',
};

export function configTypeName(type: ConfigType): string {
  return TYPE_NAMES[type] ?? 'UNKNOWN';
}

function parseInteger(key: string, text: string, type: ConfigType, min: number, max: number): number {
  if (!INTEGER_PATTERN.test(text))
    throw new ConfigError(key, text, `Not a number of type ${configTypeName(type)}`);
  const n = Number(text);
  if (n < min || n > max) throw new ConfigError(key, text, `Not a number of type ${configTypeName(type)}`);
  return n;
}

function parseLong(key: string, text: string): bigint {
  if (!INTEGER_PATTERN.test(text)) throw new ConfigError(key, text, 'Not a number of type LONG');
  const n = BigInt(text);
  if (n < LONG_MIN || n > LONG_MAX) throw new ConfigError(key, text, 'Not a number of type LONG');
  return n;
}

function parseDouble(key: string, text: string): number {
  if (text === 'NaN') return Number.NaN;
  if (text === 'Infinity' || text === '+Infinity') return Number.POSITIVE_INFINITY;
  if (text === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (!DOUBLE_PATTERN.test(text)) throw new ConfigError(key, text, 'Not a number of type DOUBLE');
  return Number(text.replace(/[dDfF]$/, ''));
}

/** Splits a list value the way Kafka does: empty text is an empty list, commas may have spaces around them. */
export function splitList(text: string): string[] {
  const trimmed = text.trim();
  return trimmed.length === 0 ? [] : trimmed.split(/\s*,\s*/);
}

/** Parses one value; null stays null (the caller decides whether null is allowed for the key). */
export function parseConfigValue(key: string, type: ConfigType, raw: string | null): ConfigValue {
  if (raw === null) return null;
  const text = raw.trim();
  switch (type) {
    case ConfigType.BOOLEAN: {
      const lower = text.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      throw new ConfigError(key, text, 'Expected value to be either true or false');
    }
    case ConfigType.INT:
      return parseInteger(key, text, type, INT_MIN, INT_MAX);
    case ConfigType.SHORT:
      return parseInteger(key, text, type, SHORT_MIN, SHORT_MAX);
    case ConfigType.LONG:
      return parseLong(key, text);
    case ConfigType.DOUBLE:
      return parseDouble(key, text);
    case ConfigType.STRING:
    case ConfigType.CLASS:
      return text;
    case ConfigType.LIST:
      return splitList(text);
    case ConfigType.PASSWORD:
      return new Password(text);
    default:
      // Unknown keys are kept as text; they have no type to check against.
      return raw;
  }
}

/** Java's Double.toString: "1.0" for whole numbers, an exponent with "E" outside [1e-3, 1e7). */
function formatDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(n);
  if (abs !== 0 && (abs >= 1e7 || abs < 1e-3)) {
    const [mantissa = '', exponent = ''] = n.toExponential().split('e');
    const m = mantissa.includes('.') ? mantissa : `${mantissa}.0`;
    return `${m}E${exponent.replace('+', '')}`;
  }
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

/**
 * Formats a parsed value as DescribeConfigs reports it. Passwords format as their text: hiding them is the
 * describer's job, because the same text is also what gets persisted.
 */
export function formatConfigValue(type: ConfigType, value: ConfigValue): string | null {
  if (value === null) return null;
  if (value instanceof Password) return value.value;
  if (Array.isArray(value)) return value.join(',');
  if (type === ConfigType.DOUBLE) {
    assert(typeof value === 'number', 'double config value must be a number');
    return formatDouble(value);
  }
  return String(value);
}
