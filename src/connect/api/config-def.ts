// Config definitions with validation (Kafka's ConfigDef): each key has a type, an optional default, a validator,
// an importance, documentation and a place in a group. parse() gives typed values or throws the first
// ConfigException; validate() gives every key's value and errors, the shape behind the REST API's
// PUT /connector-plugins/{class}/config/validate. Messages are Kafka's.

import { ConfigException } from '../errors.js';

export type ConfigType =
  | 'BOOLEAN'
  | 'STRING'
  | 'INT'
  | 'SHORT'
  | 'LONG'
  | 'DOUBLE'
  | 'LIST'
  | 'CLASS'
  | 'PASSWORD';
export type Importance = 'HIGH' | 'MEDIUM' | 'LOW';
export type Width = 'NONE' | 'SHORT' | 'MEDIUM' | 'LONG';

/** A password: its value is never printed (toString and JSON give "[hidden]"). */
export class Password {
  constructor(readonly value: string) {}
  toString(): string {
    return '[hidden]';
  }
  toJSON(): string {
    return '[hidden]';
  }
}

export interface Validator {
  /** Throws a ConfigException when `value` (already parsed) is not allowed. */
  ensureValid(name: string, value: unknown): void;
  toString(): string;
}

export interface ConfigKeyInput {
  name: string;
  type: ConfigType;
  /** Absent: the key is required. */
  defaultValue?: unknown;
  validator?: Validator;
  importance: Importance;
  documentation: string;
  group?: string;
  orderInGroup?: number;
  width?: Width;
  displayName?: string;
  dependents?: string[];
}

export interface ConfigKey extends ConfigKeyInput {
  readonly required: boolean;
}

/** One key's outcome in validate(): Kafka's ConfigValue. */
export interface ConfigValue {
  name: string;
  value: unknown;
  recommendedValues: unknown[];
  errors: string[];
  visible: boolean;
}

export type ParsedConfig = Record<string, unknown>;

export class ConfigDef {
  private readonly keyMap = new Map<string, ConfigKey>();

  define(key: ConfigKeyInput): this {
    if (this.keyMap.has(key.name)) throw new ConfigException(`Configuration ${key.name} is defined twice.`);
    const required = !('defaultValue' in key);
    if (!required && key.defaultValue !== null && key.validator !== undefined) {
      key.validator.ensureValid(key.name, parseType(key.name, key.defaultValue, key.type));
    }
    this.keyMap.set(key.name, { ...key, required });
    return this;
  }

  /** Adds every key of another definition (a connector's own keys on top of the common ones). */
  merge(other: ConfigDef): this {
    for (const k of other.keys()) if (!this.keyMap.has(k.name)) this.keyMap.set(k.name, k);
    return this;
  }

  keys(): ConfigKey[] {
    return [...this.keyMap.values()];
  }

  key(name: string): ConfigKey | undefined {
    return this.keyMap.get(name);
  }

  groups(): string[] {
    const out: string[] = [];
    for (const k of this.keyMap.values())
      if (k.group !== undefined && !out.includes(k.group)) out.push(k.group);
    return out;
  }

  /** Typed values of every defined key; throws the first problem found. */
  parse(props: Readonly<Record<string, string>>): ParsedConfig {
    const out: ParsedConfig = {};
    for (const key of this.keyMap.values()) out[key.name] = parseKey(key, props[key.name]);
    return out;
  }

  /** Every defined key's value and errors, never throwing for bad values. */
  validate(props: Readonly<Record<string, string>>): ConfigValue[] {
    return this.keys().map((key) => {
      const cv: ConfigValue = {
        name: key.name,
        value: props[key.name] ?? null,
        recommendedValues: [],
        errors: [],
        visible: true,
      };
      try {
        cv.value = parseKey(key, props[key.name]);
      } catch (err) {
        if (!(err instanceof ConfigException)) throw err;
        cv.errors.push(err.message);
      }
      return cv;
    });
  }
}

function parseKey(key: ConfigKey, raw: string | undefined): unknown {
  if (raw === undefined) {
    if (key.required) {
      throw new ConfigException(`Missing required configuration "${key.name}" which has no default value.`);
    }
    const dflt = key.defaultValue === null ? null : parseType(key.name, key.defaultValue, key.type);
    return dflt;
  }
  const value = parseType(key.name, raw, key.type);
  key.validator?.ensureValid(key.name, value);
  return value;
}

/** A raw value (string from properties, or a typed default) as the key's type. */
export function parseType(name: string, value: unknown, type: ConfigType): unknown {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value.trim() : value;
  const bad = (what: string): never => {
    throw ConfigException.invalid(name, value, `Expected value to be ${what}`);
  };
  switch (type) {
    case 'BOOLEAN':
      if (typeof text === 'boolean') return text;
      if (typeof text === 'string' && /^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
      return bad('either true or false');
    case 'STRING':
    case 'CLASS':
      return typeof value === 'string' ? text : String(value);
    case 'PASSWORD':
      return value instanceof Password ? value : new Password(String(value));
    case 'INT':
    case 'SHORT':
    case 'LONG': {
      const n =
        typeof text === 'number'
          ? text
          : typeof text === 'string' && /^[+-]?\d+$/.test(text)
            ? Number(text)
            : NaN;
      const [lo, hi] =
        type === 'SHORT'
          ? [-32768, 32767]
          : type === 'INT'
            ? [-2147483648, 2147483647]
            : [-(2 ** 63), 2 ** 63 - 1];
      if (!Number.isInteger(n) || n < lo || n > hi) {
        throw ConfigException.invalid(name, value, `Not a number of type ${type}`);
      }
      return n;
    }
    case 'DOUBLE': {
      const n =
        typeof text === 'number' ? text : typeof text === 'string' && text !== '' ? Number(text) : NaN;
      if (Number.isNaN(n)) throw ConfigException.invalid(name, value, 'Not a number of type DOUBLE');
      return n;
    }
    case 'LIST':
      if (Array.isArray(value)) return value.map(String);
      if (typeof text !== 'string') return bad('a comma-separated list');
      return text === '' ? [] : text.split(/\s*,\s*/);
  }
}

/** Kafka's ConfigDef.Range: a number within [min, max]. */
export function range(min?: number, max?: number): Validator {
  return {
    ensureValid(name, value) {
      if (value === null) return;
      const n = value as number;
      if (min !== undefined && n < min)
        throw ConfigException.invalid(name, value, `Value must be at least ${min}`);
      if (max !== undefined && n > max)
        throw ConfigException.invalid(name, value, `Value must be no more than ${max}`);
    },
    toString: () =>
      min !== undefined && max !== undefined
        ? `[${min},...,${max}]`
        : min !== undefined
          ? `[${min},...]`
          : `[...,${max}]`,
  };
}

/** Kafka's ConfigDef.ValidString (or CaseInsensitiveValidString). */
export function oneOf(values: readonly string[], caseInsensitive = false): Validator {
  const norm = (s: string) => (caseInsensitive ? s.toUpperCase() : s);
  const allowed = new Set(values.map(norm));
  return {
    ensureValid(name, value) {
      if (value === null) return;
      if (!allowed.has(norm(String(value)))) {
        throw ConfigException.invalid(
          name,
          value,
          `String must be one of${caseInsensitive ? ' (case insensitive)' : ''}: ${values.join(', ')}`,
        );
      }
    },
    toString: () => `[${values.join(', ')}]`,
  };
}

/**
 * Kafka's NonEmptyStringWithoutControlChars (a connector's `name`): empty refused, and every ISO control character
 * (U+0000 to U+001F, U+007F to U+009F, as Java's Character.isISOControl), listed by code point.
 */
export const nonEmptyStringWithoutControlChars: Validator = {
  ensureValid(name, value) {
    if (value === null) return;
    const s = String(value);
    if (s.length === 0) throw ConfigException.invalid(name, value, 'String may not be empty');
    const controls = [...s]
      .map((c) => c.codePointAt(0)!)
      .filter((c) => c <= 0x1f || (c >= 0x7f && c <= 0x9f));
    if (controls.length > 0)
      throw ConfigException.invalid(
        name,
        value,
        `String may not contain control sequences but had the following ASCII chars: ${controls.join(', ')}`,
      );
  },
  toString: () => 'non-empty string without ISO control characters',
};

/** Kafka's NonEmptyString. */
export const nonEmptyString: Validator = {
  ensureValid(name, value) {
    if (value !== null && String(value).length === 0)
      throw ConfigException.invalid(name, value, 'String must be non-empty');
  },
  toString: () => 'non-empty string',
};
