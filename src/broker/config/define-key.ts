// A compact way to write one config key's definition, so that the tables of broker and topic keys read like
// Kafka's documentation: name, type, default, importance, a line of doc, and the optional extras.

import type { BrookSupport, ConfigKeyDef, Importance, UpdateMode } from './config-types.js';
import type { Validator } from './validators.js';

export interface KeyOptions {
  readonly validator?: Validator;
  /** Defaults to read-only: a key is dynamic only when Kafka documents it so. */
  readonly updateMode?: UpdateMode;
  /** Defaults to planned; a key the broker reads says honoured. */
  readonly support?: BrookSupport;
}

/** Java's Integer.MAX_VALUE and Long.MAX_VALUE, written as Kafka writes them in its defaults. */
export const INT_MAX_TEXT = '2147483647';
export const LONG_MAX_TEXT = '9223372036854775807';
export const DOUBLE_MAX_TEXT = '1.7976931348623157E308';

export function defineKey(
  name: string,
  type: ConfigKeyDef['type'],
  defaultValue: string | null,
  importance: Importance,
  doc: string,
  options: KeyOptions = {},
): ConfigKeyDef {
  return {
    name,
    type,
    defaultValue,
    importance,
    doc,
    validator: options.validator,
    updateMode: options.updateMode ?? 'read-only',
    support: options.support ?? 'planned',
  };
}
