// Emits RESPONSE_SHAPES: every served API's response structure as data (fields, versions, nullability,
// defaults), so that code which builds a response for any API without a constructor per API (the error responses
// of src/protocol/error-response.ts) reads the same facts the codecs were generated from.

import type { ApiPair } from './emit-files.js';
import { GENERATED_MARKER } from './emit-files.js';
import { StructEmitter } from './emit-struct.js';
import type { FieldSchema, MessageSchema, StructSchema } from './schema.js';
import { isEmpty } from './versions.js';

function range(r: { min: number; max: number }): string {
  return `[${r.min}, ${r.max}]`;
}

function fieldShape(field: FieldSchema, emitter: StructEmitter): string {
  const parts = [`versions: ${range(field.versions)}`];
  if (!isEmpty(field.nullableVersions)) parts.push(`nullable: ${range(field.nullableVersions)}`);
  const type = field.type;
  const element = type.kind === 'array' ? type.element : type;
  parts.push(`type: '${type.kind === 'primitive' ? type.name : type.kind}'`);
  if (field.defaultValue.kind === 'null') parts.push('value: null');
  else if (type.kind === 'primitive') parts.push(`value: ${emitter.defaultExpression(field)}`);
  if (element.kind === 'struct') parts.push(`struct: ${structShape(element.struct, emitter)}`);
  return `{ ${parts.join(', ')} }`;
}

function structShape(struct: StructSchema, emitter: StructEmitter): string {
  return `{ ${struct.fields.map((f) => `${f.property}: ${fieldShape(f, emitter)}`).join(', ')} }`;
}

function responseShape(response: MessageSchema): string {
  return structShape(response.root, new StructEmitter(response));
}

export function emitResponseShapes(pairs: ApiPair[]): string {
  const entries = pairs.map((p) => `  ${p.request.apiKey}: ${responseShape(p.response)},`);
  const body = entries.join('\n');
  const support = ['type StructShape', 'ZERO_UUID', 'EMPTY_BYTES'].filter(
    (name) => name.startsWith('type ') || new RegExp(`\\b${name}\\b`).test(body),
  );
  return `${GENERATED_MARKER}
// Every served API's response as data, by API key: each field's versions, nullable versions, type and default.

import { ${support.join(', ')} } from './codec-support.js';

export const RESPONSE_SHAPES: Readonly<Record<number, StructShape>> = {
${body}
};
`;
}
