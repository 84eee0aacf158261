// The committed schema: the facts of Kafka's JSON message specifications that the generator and the tests use
// (names, types, version ranges, tags, defaults, listeners), without the specifications' prose and comments,
// in one file inside the repository. `npm run schema` derives it from Kafka's specifications; `npm run
// generate` and the tests read only this file, so a clone of the repository needs nothing beside it.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatFiles } from './format.js';
import type { GeneratedFile } from './generate.js';
import {
  type RawField,
  type RawMessage,
  type RawSpec,
  type RawStruct,
  readSpecFolder,
} from './spec-reader.js';

/** Where the committed schema lives, relative to the repository root. */
export const SCHEMA_PATH = 'src/protocol/schema/kafka-messages.json';

/** Which Kafka release line the facts describe and the terms they come under. */
export interface SchemaSource {
  readonly project: string;
  readonly version: string;
  readonly license: string;
  readonly notice: string;
}

export interface SchemaFile {
  readonly source: SchemaSource;
  /** Requests, responses, headers and the consumer protocol (Kafka's `message` folder), sorted by file name. */
  readonly messages: RawMessage[];
  /** Records of the internal topics and the producer snapshot, sorted by file name. */
  readonly internal: RawMessage[];
}

const NOTICE =
  'Derived from the JSON message specifications of Apache Kafka (Copyright The Apache Software Foundation), ' +
  'licensed under the Apache License 2.0. Holds their facts only: no descriptions or comments.';

// Key orders of the compact form. A key the generator does not read (about, entityType, mapKey, ignorable,
// zeroCopy) is left out; adding a fact here means the generator started to depend on it.
const MESSAGE_KEYS = [
  'name',
  'type',
  'apiKey',
  'validVersions',
  'flexibleVersions',
  'deprecatedVersions',
  'latestVersionUnstable',
  'listeners',
  'fields',
  'commonStructs',
] as const;
const STRUCT_KEYS = ['name', 'versions', 'fields'] as const;
const FIELD_KEYS = [
  'name',
  'type',
  'versions',
  'nullableVersions',
  'taggedVersions',
  'tag',
  'flexibleVersions',
  'default',
  'fields',
] as const;

function pick<T>(
  source: object,
  keys: readonly string[],
  nested: (key: string, value: unknown) => unknown,
): T {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = nested(key, value);
  }
  return out as T;
}

function compactField(field: RawField): RawField {
  return pick(field, FIELD_KEYS, (key, value) =>
    key === 'fields' ? (value as RawField[]).map(compactField) : value,
  );
}

function compactStruct(struct: RawStruct): RawStruct {
  return pick(struct, STRUCT_KEYS, (key, value) =>
    key === 'fields' ? (value as RawField[]).map(compactField) : value,
  );
}

function compactMessage(message: RawMessage): RawMessage {
  return pick(message, MESSAGE_KEYS, (key, value) => {
    if (key === 'fields') return (value as RawField[]).map(compactField);
    if (key === 'commonStructs') return (value as RawStruct[]).map(compactStruct);
    return value;
  });
}

/** The schema of Kafka's specification folders (`message/` and `internal/` of `specDir`). */
export function deriveSchema(specDir: string, version: string): SchemaFile {
  const folder = (name: string) =>
    readSpecFolder(join(specDir, name)).map((spec) => compactMessage(spec.json));
  return {
    source: { project: 'Apache Kafka', version, license: 'Apache-2.0', notice: NOTICE },
    messages: folder('messages'),
    internal: folder('internal'),
  };
}

/**
 * The schema as JSON text with one line per field, so that a refresh from a newer Kafka shows in a diff as the
 * fields that changed. `derivedSchemaFile` passes it through biome for the committed layout.
 */
export function serializeSchema(schema: SchemaFile): string {
  const lines: string[] = ['{', `  "source": ${JSON.stringify(schema.source)},`];
  const list = (name: string, messages: RawMessage[], last: boolean) => {
    lines.push(`  "${name}": [`);
    messages.forEach((m, i) => {
      writeObject(lines, m as unknown as Record<string, unknown>, 4, i === messages.length - 1);
    });
    lines.push(last ? '  ]' : '  ],');
  };
  list('messages', schema.messages, false);
  list('internal', schema.internal, true);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** Writes an object whose `fields`/`commonStructs` lists go one element a line, the rest on the first line. */
function writeObject(lines: string[], value: Record<string, unknown>, indent: number, last: boolean): void {
  const pad = ' '.repeat(indent);
  const lists: string[] = Object.keys(value).filter((k) => k === 'fields' || k === 'commonStructs');
  const scalars = Object.entries(value)
    .filter(([k]) => !lists.includes(k))
    .map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`);
  const end = last ? '' : ',';
  if (lists.length === 0) {
    lines.push(`${pad}{ ${scalars.join(', ')} }${end}`);
    return;
  }
  lines.push(`${pad}{`);
  if (scalars.length > 0) lines.push(`${pad}  ${scalars.join(', ')},`);
  lists.forEach((key, i) => {
    const items = value[key] as Record<string, unknown>[];
    const listEnd = i === lists.length - 1 ? '' : ',';
    if (items.length === 0) {
      lines.push(`${pad}  ${JSON.stringify(key)}: []${listEnd}`);
      return;
    }
    lines.push(`${pad}  ${JSON.stringify(key)}: [`);
    items.forEach((item, j) => {
      writeObject(lines, item, indent + 4, j === items.length - 1);
    });
    lines.push(`${pad}  ]${listEnd}`);
  });
  lines.push(`${pad}}${end}`);
}

function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  return JSON.stringify(value);
}

export function parseSchema(text: string): SchemaFile {
  const schema = JSON.parse(text) as SchemaFile;
  if (!schema.source?.version || !Array.isArray(schema.messages) || !Array.isArray(schema.internal)) {
    throw new Error(`${SCHEMA_PATH} is not a schema file`);
  }
  return schema;
}

/** The committed schema, or null when the repository has none yet. */
export function readCommittedSchema(root: string): SchemaFile | null {
  const path = join(root, SCHEMA_PATH);
  return existsSync(path) ? parseSchema(readFileSync(path, 'utf8')) : null;
}

/** A schema's messages in the shape the schema builder takes. */
export function asSpecs(messages: RawMessage[]): RawSpec[] {
  return messages.map((json) => ({ file: `${json.name}.json`, json }));
}

/** The schema file `npm run schema` writes from Kafka's specifications, formatted as `npm run lint` wants it. */
export function derivedSchemaFile(specDir: string, version: string, root: string): GeneratedFile {
  const text = serializeSchema(deriveSchema(specDir, version));
  return formatFiles([{ path: SCHEMA_PATH, text }], root)[0]!;
}
