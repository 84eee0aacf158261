// The converter contract (Kafka's org.apache.kafka.connect.storage.Converter): Connect data (a schema and a
// value) to the bytes of a record key or value and back. A converter is configured once, as a key or as a
// value converter, with the keys that follow `key.converter.` or `value.converter.` in the worker or connector
// config (`value.converter.schemas.enable=false` reaches the converter as `schemas.enable=false`).

import type { Schema } from '../data/schema.js';

export interface SchemaAndValue {
  readonly schema: Schema | null;
  readonly value: unknown;
}

export const NULL_SCHEMA_AND_VALUE: SchemaAndValue = Object.freeze({ schema: null, value: null });

export interface Converter {
  configure(configs: Readonly<Record<string, string>>, isKey: boolean): void;
  fromConnectData(topic: string, schema: Schema | null, value: unknown): Buffer | null;
  toConnectData(topic: string, value: Buffer | null): SchemaAndValue;
}

export type ConverterClass = new () => Converter;

/** The keys of `config` that start with `prefix`, with the prefix taken off. */
export function withPrefixStripped(
  config: Readonly<Record<string, string>>,
  prefix: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}
