// Every response version @platformatic/kafka can parse (over a hundred API versions), checked against our
// encoder: we encode a value with every field set, their hand-written parser reads it, and every field they
// return must hold the value we put in. Their parsers read field by field in order, so a layout difference in
// any field shows up as a wrong value or an exception.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as platformatic from '@platformatic/kafka';
import { apiPairs, loadMessages } from '../../../src/protocol/generator/generate.js';
import type { FieldType, StructSchema } from '../../../src/protocol/generator/schema.js';
import { contains } from '../../../src/protocol/generator/versions.js';
import { Writer } from '../../../src/protocol/primitives/index.js';
import { findApi } from '../../../src/protocol/registry.js';
import { SampleBuilder } from './sample-values.js';

interface ParserModule {
  parseResponse(
    correlationId: number,
    apiKey: number,
    apiVersion: number,
    reader: platformatic.Reader,
  ): unknown;
  api: { key: number; version: number };
}

/** Their parsers for versions our specifications also define (theirs include a few newer ones). */
function parserModules(): [string, ParserModule][] {
  return Object.entries(platformatic as Record<string, unknown>)
    .filter(
      ([name, value]) => /V\d+$/.test(name) && typeof (value as ParserModule)?.parseResponse === 'function',
    )
    .map(([name, value]): [string, ParserModule] => [name, value as ParserModule])
    .filter(([, module]) => {
      const api = findApi(module.api.key);
      return api !== undefined && module.api.version <= api.maxVersion;
    })
    .filter(([name]) => !(name in THEIR_BUGS));
}

/**
 * Adapts a sample to what their parsers can take: no record batches (they would parse them; the codecs keep
 * them opaque) and error code 0 everywhere (their error mapping throws a TypeError on codes it does not know).
 */
function forParser(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(forParser);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = key === 'records' ? null : key === 'errorCode' ? 0 : forParser(field);
  }
  return out;
}

/**
 * Parsers of theirs that read a layout the specification does not define, checked separately below so that
 * this list goes stale loudly if they are fixed.
 */
const THEIR_BUGS: Record<string, string> = {
  consumerGroupDescribeV0: 'reads SubscribedTopicNames as one string instead of an array of strings',
  describeConfigsV2: 'reads ConfigType and Documentation, which exist only from v3',
  offsetForLeaderEpochV4: 'reads Partition before ErrorCode',
  alterPartitionV3: 'reads TopicId as a string and Isr as one int32',
};

function dashedUuid(text: string): string {
  const hex = Buffer.from(text, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface Comparison {
  matched: number;
  mismatches: string[];
}

/**
 * Walks what they parsed; each field that exists in our schema at this version must hold the value we sent.
 * Fields absent at the version are left out: their parsers fill those with values of their own choosing.
 */
function compareStruct(
  theirs: unknown,
  ours: Record<string, unknown>,
  struct: StructSchema,
  version: number,
  path: string,
  result: Comparison,
): void {
  if (theirs === null || typeof theirs !== 'object') {
    result.mismatches.push(`${path}: ${String(theirs)} where we sent a struct`);
    return;
  }
  for (const [key, value] of Object.entries(theirs)) {
    const field = struct.fields.find((f) => f.property === key);
    if (field === undefined || !contains(field.versions, version)) continue;
    compareField(value, ours[key], field.type, version, `${path}.${key}`, result);
  }
}

function compareField(
  theirs: unknown,
  ours: unknown,
  type: FieldType,
  version: number,
  path: string,
  result: Comparison,
): void {
  if (type.kind === 'array') {
    if (!Array.isArray(theirs) || !Array.isArray(ours) || ours.length !== theirs.length) {
      if (!(ours === null && (theirs === null || (Array.isArray(theirs) && theirs.length === 0)))) {
        result.mismatches.push(`${path}: array of ${Array.isArray(theirs) ? theirs.length : String(theirs)}`);
      }
      return;
    }
    for (let i = 0; i < theirs.length; i++)
      compareField(theirs[i], ours[i], type.element, version, `${path}[${i}]`, result);
    return;
  }
  if (type.kind === 'struct') {
    if (ours === null) {
      if (theirs !== null && theirs !== undefined)
        result.mismatches.push(`${path}: a struct where we sent null`);
      return;
    }
    compareStruct(theirs, ours as Record<string, unknown>, type.struct, version, path, result);
    return;
  }
  if (Buffer.isBuffer(theirs)) {
    if (Buffer.isBuffer(ours) && ours.equals(theirs)) result.matched++;
    else result.mismatches.push(`${path}: bytes`);
    return;
  }
  const expected = type.name === 'uuid' && typeof ours === 'string' ? dashedUuid(ours) : ours;
  if (theirs === expected || (theirs === undefined && ours === null)) result.matched++;
  else result.mismatches.push(`${path}: ${String(theirs)} != ${String(expected)}`);
}

const pairs = new Map(apiPairs(loadMessages()).map((p) => [p.request.apiKey!, p]));

/** Encodes a full sample with our codec and has their parser read it; an exception is returned, not thrown. */
function crossRead(name: string, module: ParserModule): Comparison | { error: unknown } {
  const { key, version } = module.api;
  const message = pairs.get(key)!.response;
  // No tagged fields: @platformatic/kafka skips a tagged-field section as if it were one length-prefixed blob,
  // which only works when the section is empty.
  const sample = new SampleBuilder({ nulls: false, arrayLength: 2, untagged: true }).struct(
    message.root,
    version,
  );
  const value = forParser(sample) as Record<string, unknown>;
  const w = new Writer();
  findApi(key)!.encodeResponse(w, version, value);
  let parsed: unknown;
  try {
    parsed = module.parseResponse(0, key, version, platformatic.Reader.from(w.toBuffer()));
  } catch (error) {
    // Their parsers throw when a response carries error codes, with the parsed response attached.
    const response = (error as { response?: unknown }).response;
    if (response === undefined) return { error };
    parsed = response;
  }
  const result: Comparison = { matched: 0, mismatches: [] };
  compareStruct(parsed, value, message.root, version, name, result);
  return result;
}

describe('responses we encode, read by @platformatic/kafka', () => {
  const modules = parserModules();

  it('finds about a hundred response parsers to check against', () => {
    assert.ok(modules.length >= 95, `only ${modules.length} parsers`);
  });

  for (const [name, module] of modules) {
    it(`${name} (key ${module.api.key} v${module.api.version})`, () => {
      const result = crossRead(name, module);
      if ('error' in result) throw result.error;
      assert.deepEqual(result.mismatches, []);
      assert.ok(result.matched > 0, 'no field was compared');
    });
  }

  for (const [name, reason] of Object.entries(THEIR_BUGS)) {
    it(`${name} still misreads the specification's layout (${reason})`, () => {
      const result = crossRead(name, (platformatic as Record<string, unknown>)[name] as ParserModule);
      assert.ok(
        'error' in result || result.mismatches.length > 0,
        'fixed upstream: remove it from THEIR_BUGS',
      );
    });
  }
});
