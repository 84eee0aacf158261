// A set of config values parsed and validated against a table of key definitions, with typed getters. Values
// come from raw text (a properties file, overrides, stored dynamic configs) and fall back to each key's
// default. Keys the table does not define are kept as text and listed, because Kafka keeps them too (plug-ins
// read them) and only logs them as unknown.

import { assert } from '../../common/assert.js';
import { ConfigError } from './config-error.js';
import { type ConfigKeyDef, type ConfigValue, Password } from './config-types.js';
import { parseConfigValue } from './value-codec.js';

/** Long.MAX_VALUE and other longs beyond 2^53 become this number: 2^53 ms is 285,000 years, 2^53 bytes 8 PiB. */
export const LONG_AS_NUMBER_MAX = Number.MAX_SAFE_INTEGER;

export function longToNumber(value: bigint): number {
  if (value > BigInt(LONG_AS_NUMBER_MAX)) return LONG_AS_NUMBER_MAX;
  if (value < BigInt(-LONG_AS_NUMBER_MAX)) return -LONG_AS_NUMBER_MAX;
  return Number(value);
}

/** Parses one key's text (or its default when text is undefined) and runs its validator. */
export function parseKey(def: ConfigKeyDef, text: string | null | undefined): ConfigValue {
  const value = parseConfigValue(def.name, def.type, text === undefined ? def.defaultValue : text);
  if (value !== null && def.validator !== undefined) def.validator.check(def.name, value);
  return value;
}

export class ParsedConfig {
  private constructor(
    private readonly values: ReadonlyMap<string, ConfigValue>,
    /** The raw text of every key that was set, known or not. */
    readonly originals: ReadonlyMap<string, string>,
    readonly unknownKeys: readonly string[],
  ) {}

  /**
   * Parses every key of the table (set or defaulted), plus set keys that `lookup` knows outside the table
   * (listener overrides, whose names are open-ended).
   */
  static parse(
    defs: ReadonlyMap<string, ConfigKeyDef>,
    raw: ReadonlyMap<string, string>,
    lookup: (name: string) => ConfigKeyDef | undefined = (name) => defs.get(name),
  ): ParsedConfig {
    const values = new Map<string, ConfigValue>();
    for (const def of defs.values()) values.set(def.name, parseKey(def, raw.get(def.name)));
    const unknownKeys: string[] = [];
    for (const [name, text] of raw) {
      if (defs.has(name)) continue;
      const def = lookup(name);
      if (def === undefined) unknownKeys.push(name);
      else values.set(name, parseKey(def, text));
    }
    return new ParsedConfig(values, raw, unknownKeys.sort());
  }

  /** True when the key is defined or was set with a definition (a listener override). */
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** True when the key was given explicitly rather than left to its default. */
  isSet(name: string): boolean {
    return this.originals.has(name);
  }

  value(name: string): ConfigValue {
    assert(this.values.has(name), `config key ${name} is not defined`);
    return this.values.get(name) as ConfigValue;
  }

  int(name: string): number {
    const v = this.value(name);
    assert(typeof v === 'number', `config key ${name} is not a number`);
    return v;
  }

  intOrNull(name: string): number | null {
    const v = this.value(name);
    return v === null ? null : this.int(name);
  }

  /** A LONG as a number, saturating at LONG_AS_NUMBER_MAX (see longToNumber). */
  long(name: string): number {
    const v = this.value(name);
    assert(typeof v === 'bigint', `config key ${name} is not a long`);
    return longToNumber(v);
  }

  longOrNull(name: string): number | null {
    return this.value(name) === null ? null : this.long(name);
  }

  double(name: string): number {
    const v = this.value(name);
    assert(typeof v === 'number', `config key ${name} is not a double`);
    return v;
  }

  boolean(name: string): boolean {
    const v = this.value(name);
    assert(typeof v === 'boolean', `config key ${name} is not a boolean`);
    return v;
  }

  string(name: string): string {
    const v = this.value(name);
    if (v === null) throw new ConfigError(name, null, 'Value must be non-null');
    assert(typeof v === 'string', `config key ${name} is not a string`);
    return v;
  }

  stringOrNull(name: string): string | null {
    return this.value(name) === null ? null : this.string(name);
  }

  list(name: string): readonly string[] {
    const v = this.value(name);
    assert(Array.isArray(v), `config key ${name} is not a list`);
    return v as readonly string[];
  }

  password(name: string): Password | null {
    const v = this.value(name);
    assert(v === null || v instanceof Password, `config key ${name} is not a password`);
    return v;
  }
}
