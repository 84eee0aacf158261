// Turns the committed schema into the full set of generated files, as (path, text) pairs relative to the
// repository root. Pure apart from reading the schema, so that the staleness test can run it in memory.

import { asSpecs, readCommittedSchema, SCHEMA_PATH, type SchemaFile } from './compact-schema.js';
import {
  type ApiPair,
  apiFileName,
  emitApiFile,
  emitApiIndex,
  emitDataFile,
  emitDataIndex,
} from './emit-files.js';
import { emitResponseShapes } from './emit-shapes.js';
import { kebabCase } from './names.js';
import { buildSchema, type MessageSchema } from './schema.js';
import { repositoryRoot } from './spec-reader.js';

export interface GeneratedFile {
  /** Relative to the repository root, with forward slashes. */
  readonly path: string;
  readonly text: string;
}

/** Folders the generator writes into; a file there that carries the generated marker but was not produced is stale. */
export const GENERATED_FOLDERS = [
  'src/protocol/messages',
  'src/protocol/internal',
  'src/protocol/consumer-protocol',
];

/** APIs served by a broker (ZooKeeper-mode or KRaft-mode); controller-only APIs are left out. */
function servedByBroker(message: MessageSchema): boolean {
  return message.listeners.includes('zkBroker') || message.listeners.includes('broker');
}

/** The committed schema (src/protocol/schema/kafka-messages.json) of this repository. */
export function committedSchema(): SchemaFile {
  const schema = readCommittedSchema(repositoryRoot());
  if (!schema)
    throw new Error(`${SCHEMA_PATH} is missing: run \`npm run schema\` with Kafka's specifications`);
  return schema;
}

/** Requests, responses, headers and consumer protocol blobs, as the generator models them. */
export function loadMessages(schema: SchemaFile = committedSchema()): MessageSchema[] {
  return asSpecs(schema.messages).map(buildSchema);
}

/** Internal-topic records and the producer snapshot, as the generator models them. */
export function loadInternal(schema: SchemaFile = committedSchema()): MessageSchema[] {
  return asSpecs(schema.internal).map(buildSchema);
}

/** Request/response pairs of every API a broker serves, in API key order. */
export function apiPairs(messages: MessageSchema[]): ApiPair[] {
  const responses = new Map(messages.filter((m) => m.kind === 'response').map((m) => [m.name, m]));
  const pairs: ApiPair[] = [];
  for (const request of messages) {
    if (request.kind !== 'request' || !servedByBroker(request)) continue;
    const response = responses.get(request.name.replace(/Request$/, 'Response'));
    if (!response) throw new Error(`${request.name} has no response specification`);
    pairs.push({ request, response });
  }
  return pairs.sort((a, b) => a.request.apiKey! - b.request.apiKey!);
}

export function generateFiles(schema: SchemaFile): GeneratedFile[] {
  const messages = loadMessages(schema);
  const byName = new Map(messages.map((m) => [m.name, m]));
  const pairs = apiPairs(messages);
  const files: GeneratedFile[] = pairs.map((pair) => ({
    path: `src/protocol/messages/${apiFileName(pair)}`,
    text: emitApiFile(pair),
  }));
  files.push({ path: 'src/protocol/messages/index.ts', text: emitApiIndex(pairs) });
  files.push({ path: 'src/protocol/messages/response-shapes.ts', text: emitResponseShapes(pairs) });
  for (const name of ['RequestHeader', 'ResponseHeader']) {
    files.push({
      path: `src/protocol/messages/${kebabCase(name)}.ts`,
      text: emitDataFile(byName.get(name)!, './codec-support.js'),
    });
  }
  for (const name of ['ConsumerProtocolSubscription', 'ConsumerProtocolAssignment']) {
    files.push({
      path: `src/protocol/consumer-protocol/${kebabCase(name.replace(/^ConsumerProtocol/, ''))}.ts`,
      text: emitDataFile(byName.get(name)!, '../messages/codec-support.js'),
    });
  }
  const internal = loadInternal(schema);
  files.push({ path: 'src/protocol/internal/index.ts', text: emitDataIndex(internal, 'internal') });
  for (const message of internal) {
    files.push({
      path: `src/protocol/internal/${kebabCase(message.name)}.ts`,
      text: emitDataFile(message, '../messages/codec-support.js'),
    });
  }
  return files;
}
