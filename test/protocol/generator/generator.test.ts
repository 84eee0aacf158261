// The generator's building blocks: version ranges, comment stripping, naming, conditions, schema building.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  deriveSchema,
  parseSchema,
  serializeSchema,
} from '../../../src/protocol/generator/compact-schema.js';
import { versionCondition } from '../../../src/protocol/generator/emit-struct.js';
import { apiBaseName, camelCase, kebabCase } from '../../../src/protocol/generator/names.js';
import { buildSchema } from '../../../src/protocol/generator/schema.js';
import { parseSpecText, stripComments } from '../../../src/protocol/generator/spec-reader.js';
import {
  contains,
  formatVersions,
  parseVersions,
  VERSION_MAX,
} from '../../../src/protocol/generator/versions.js';

describe('generator building blocks', () => {
  it('parse version ranges as the specifications write them', () => {
    assert.deepEqual(parseVersions('3+'), { min: 3, max: VERSION_MAX });
    assert.deepEqual(parseVersions('0-7'), { min: 0, max: 7 });
    assert.deepEqual(parseVersions('4'), { min: 4, max: 4 });
    assert.equal(contains(parseVersions('none'), 0), false);
    assert.equal(formatVersions(parseVersions('9+')), '9+');
    assert.throws(() => parseVersions('7-3'));
    assert.throws(() => parseVersions('x'));
  });

  it('strip line comments but keep // inside strings', () => {
    const text = '{\n  // a comment\n  "about": "see https://kafka.apache.org", // trailing\n  "n": 1\n}';
    assert.deepEqual(JSON.parse(stripComments(text)), { about: 'see https://kafka.apache.org', n: 1 });
  });

  it('name fields, files and APIs as the style guide asks', () => {
    assert.equal(camelCase('GroupInstanceId'), 'groupInstanceId');
    assert.equal(kebabCase('OffsetForLeaderEpoch'), 'offset-for-leader-epoch');
    assert.equal(kebabCase('DescribeUserScramCredentials'), 'describe-user-scram-credentials');
    assert.equal(apiBaseName('ApiVersionsRequest'), 'ApiVersions');
  });

  it('emit version conditions only where a range does not cover its context', () => {
    const context = parseVersions('0-11');
    assert.equal(versionCondition(parseVersions('0+'), context), 'true');
    assert.equal(versionCondition(parseVersions('12+'), context), 'false');
    assert.equal(versionCondition(parseVersions('3+'), context), 'version >= 3');
    assert.equal(versionCondition(parseVersions('2-5'), context), 'version >= 2 && version <= 5');
  });

  it('resolve common structs, defaults and tagged fields from a specification', () => {
    const spec = parseSpecText(
      'Example.json',
      `{ "type": "request", "name": "ExampleRequest", "apiKey": 99, "validVersions": "0-2",
         "flexibleVersions": "2+", "fields": [
           { "name": "Items", "type": "[]Item", "versions": "0+" },
           { "name": "Limit", "type": "int32", "versions": "1+", "default": "0x7fffffff" },
           { "name": "Note", "type": "string", "versions": "2+", "nullableVersions": "2+", "default": "null",
             "taggedVersions": "2+", "tag": 0 }
         ],
         "commonStructs": [ { "name": "Item", "versions": "0+", "fields": [
           { "name": "Id", "type": "int64", "versions": "0+", "default": "-1" } ] } ] }`,
    );
    const schema = buildSchema(spec);
    assert.deepEqual(
      schema.structs.map((s) => s.typeName),
      ['ExampleRequest', 'ExampleRequestItem'],
    );
    const [items, limit, note] = schema.root.fields;
    assert.equal(items!.type.kind, 'array');
    assert.deepEqual(limit!.defaultValue, { kind: 'value', value: 0x7fffffff });
    assert.equal(note!.tag, 0);
    assert.deepEqual(note!.defaultValue, { kind: 'null' });
    assert.deepEqual(schema.structs[1]!.fields[0]!.defaultValue, { kind: 'value', value: -1n });
  });

  it('refuse a struct defined twice and a null default on a non-nullable field', () => {
    const twice = parseSpecText(
      'T.json',
      `{ "type": "data", "name": "T", "validVersions": "0", "flexibleVersions": "none", "fields": [
         { "name": "A", "type": "S", "versions": "0+", "fields": [] },
         { "name": "B", "type": "S", "versions": "0+", "fields": [] } ] }`,
    );
    assert.throws(() => buildSchema(twice), /defined twice/);
    const badDefault = parseSpecText(
      'U.json',
      `{ "type": "data", "name": "U", "validVersions": "0", "flexibleVersions": "none", "fields": [
         { "name": "A", "type": "string", "versions": "0+", "default": "null" } ] }`,
    );
    assert.throws(() => buildSchema(badDefault), /non-nullable/);
  });

  it('derive a schema that keeps the facts and drops descriptions, comments and unused keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-spec-'));
    try {
      mkdirSync(join(dir, 'messages'));
      mkdirSync(join(dir, 'internal'));
      writeFileSync(
        join(dir, 'messages', 'ExampleRequest.json'),
        `// Licensed to the Apache Software Foundation (ASF)
        { "apiKey": 99, "type": "request", "listeners": ["broker"], "name": "ExampleRequest",
          "validVersions": "0-1", "flexibleVersions": "1+", // flexible from 1
          "fields": [ { "name": "Id", "type": "int64", "versions": "0+", "default": "-1", "entityType": "topicName",
            "ignorable": true, "about": "see https://kafka.apache.org" } ] }`,
      );
      const schema = deriveSchema(dir, '9.9.9');
      assert.equal(schema.source.version, '9.9.9');
      assert.deepEqual(schema.internal, []);
      assert.deepEqual(schema.messages, [
        {
          name: 'ExampleRequest',
          type: 'request',
          apiKey: 99,
          validVersions: '0-1',
          flexibleVersions: '1+',
          listeners: ['broker'],
          fields: [{ name: 'Id', type: 'int64', versions: '0+', default: '-1' }],
        },
      ]);
      const text = serializeSchema(schema);
      assert.doesNotMatch(text, /about|entityType|ignorable|Licensed/);
      assert.deepEqual(parseSchema(text), schema);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
