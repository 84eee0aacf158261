// Value validators for config keys: numeric ranges, allowed strings and allowed list items. Each one throws a
// ConfigError naming the key, with the reason worded as Kafka words it, and can describe its valid values for
// documentation ("[1,...]", "[compact, delete]").

import { ConfigError } from './config-error.js';
import type { ConfigValue } from './config-types.js';

export interface Validator {
  /** Throws ConfigError when the value is not allowed. A null value has already been accepted or refused. */
  check(key: string, value: Exclude<ConfigValue, null>): void;
  describe(): string;
  /** For a key whose values come from a fixed set: that set (which its documentation names). */
  readonly allowed?: readonly string[];
}

function compare(value: number | bigint, bound: number | bigint): number {
  if (typeof value === 'bigint' || typeof bound === 'bigint') {
    const a = BigInt(value);
    const b = BigInt(bound);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return value < bound ? -1 : value > bound ? 1 : 0;
}

function numeric(key: string, value: ConfigValue): number | bigint {
  if (typeof value === 'number' || typeof value === 'bigint') return value;
  throw new ConfigError(key, value, 'Value is not a number');
}

export function atLeast(min: number | bigint): Validator {
  return {
    check(key, value) {
      if (compare(numeric(key, value), min) < 0) {
        throw new ConfigError(key, value, `Value must be at least ${String(min)}`);
      }
    },
    describe: () => `[${String(min)},...]`,
  };
}

export function between(min: number | bigint, max: number | bigint): Validator {
  return {
    check(key, value) {
      const n = numeric(key, value);
      if (compare(n, min) < 0) throw new ConfigError(key, value, `Value must be at least ${String(min)}`);
      if (compare(n, max) > 0) throw new ConfigError(key, value, `Value must be no more than ${String(max)}`);
    },
    describe: () => `[${String(min)},...,${String(max)}]`,
  };
}

/** A range, or one extra value outside it (gzip's level: 1..9 or -1 for the library default). */
export function betweenOrExactly(min: number, max: number, extra: number): Validator {
  const range = between(min, max);
  return {
    check(key, value) {
      if (value === extra) return;
      try {
        range.check(key, value);
      } catch {
        throw new ConfigError(key, value, `Value must be in ${range.describe()} or ${extra}`);
      }
    },
    describe: () => `${range.describe()} or ${extra}`,
  };
}

/** A string from a fixed set; Kafka's ValidString is case-sensitive unless asked otherwise. */
export function oneOf(allowed: readonly string[], options: { ignoreCase?: boolean } = {}): Validator {
  const ignoreCase = options.ignoreCase === true;
  const set = new Set(ignoreCase ? allowed.map((s) => s.toUpperCase()) : allowed);
  return {
    check(key, value) {
      const s = String(value);
      if (!set.has(ignoreCase ? s.toUpperCase() : s)) {
        throw new ConfigError(key, value, `String must be one of: ${allowed.join(', ')}`);
      }
    },
    describe: () => `[${allowed.join(', ')}]`,
    allowed,
  };
}

/** Every item of a list must come from a fixed set. An empty list passes, as in Kafka 3.x. */
export function listOf(allowed: readonly string[]): Validator {
  const set = new Set(allowed);
  return {
    check(key, value) {
      if (!Array.isArray(value)) throw new ConfigError(key, value, 'Value is not a list');
      for (const item of value as readonly string[]) {
        if (!set.has(item)) throw new ConfigError(key, item, `String must be one of: ${allowed.join(', ')}`);
      }
    },
    describe: () => `[${allowed.join(', ')}]`,
    allowed,
  };
}

export function nonEmptyString(): Validator {
  return {
    check(key, value) {
      if (String(value).length === 0) throw new ConfigError(key, value, 'String must be non-empty');
    },
    describe: () => 'non-empty string',
  };
}

/** Kafka's ThrottledReplicaListValidator: `*`, or partitionId:brokerId pairs. */
export function throttledReplicaList(): Validator {
  return {
    check(key, value) {
      if (!Array.isArray(value)) throw new ConfigError(key, value, `${key} must be a List`);
      const items = (value as readonly string[]).map((s) => String(s).trim());
      if (items.every((s) => /^([0-9]+:[0-9]+)?$/.test(s)) || items.join('') === '*') return;
      throw new ConfigError(
        key,
        value,
        `${key} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`,
      );
    },
    describe: () => '[partitionId]:[brokerId],[partitionId]:[brokerId],...',
  };
}
