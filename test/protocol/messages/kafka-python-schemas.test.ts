// Every request and response schema kafka-python defines (about 180 API versions, all classic encodings)
// checked against our codecs: we encode a value with every field set, kafka-python's own schema decodes it
// (field by field, by position, so names do not matter), must consume every byte, and must encode it back to
// the very same bytes.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { apiPairs, loadMessages } from '../../../src/protocol/generator/generate.js';
import type { FieldSchema, FieldType, StructSchema } from '../../../src/protocol/generator/schema.js';
import { contains } from '../../../src/protocol/generator/versions.js';
import { Writer } from '../../../src/protocol/primitives/index.js';
import { findApi } from '../../../src/protocol/registry.js';
import { SampleBuilder } from './sample-values.js';

const PYTHON = '/usr/bin/python3';

// Lists kafka-python's schemas, or decodes and re-encodes jobs given as JSON lines on stdin.
const SCRIPT = `
import sys, json, io, pkgutil, importlib
import kafka.protocol as P
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Schema, Array

def classes():
    seen = {}
    for m in pkgutil.iter_modules(P.__path__):
        mod = importlib.import_module('kafka.protocol.' + m.name)
        for name in sorted(dir(mod)):
            value = getattr(mod, name)
            if isinstance(value, list) and value and isinstance(value[0], type) and issubclass(value[0], (Request, Response)):
                for c in value:
                    kind = 'request' if issubclass(c, Request) else 'response'
                    seen.setdefault((c.API_KEY, c.API_VERSION, kind), c)
    return seen

def plain(t, v):
    if isinstance(t, Schema):
        out = []
        for f, x in zip(t.fields, v):
            # A schema nested without an array adds no bytes of its own: its fields belong to the parent.
            if isinstance(f, Schema):
                out.extend(plain(f, x))
            else:
                out.append(plain(f, x))
        return out
    if isinstance(t, Array):
        return None if v is None else [plain(t.array_of, x) for x in v]
    if isinstance(v, bytes):
        return {'hex': v.hex()}
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    return v

found = classes()
if sys.argv[1] == 'list':
    print(json.dumps([{'key': k, 'version': v, 'kind': kind} for (k, v, kind) in sorted(found)]))
else:
    for line in sys.stdin:
        job = json.loads(line)
        schema = found[(job['key'], job['version'], job['kind'])].SCHEMA
        data = bytes.fromhex(job['hex'])
        stream = io.BytesIO(data)
        try:
            value = schema.decode(stream)
            again = schema.encode(value).hex()
            print(json.dumps({'value': plain(schema, value), 'remaining': len(data) - stream.tell(), 'again': again}))
        except Exception as e:
            print(json.dumps({'error': repr(e)}))
`;

/**
 * kafka-python schemas that differ from Kafka's specification, checked separately below so that this list
 * goes stale loudly when they are fixed.
 */
const THEIR_BUGS: Record<string, string> = {
  'ProduceResponse v8': 'lacks RecordErrors and ErrorMessage',
  'FindCoordinatorResponse v1': 'lacks ThrottleTimeMs',
  'DescribeGroupsResponse v3': 'lacks AuthorizedOperations',
  'DescribeConfigsResponse v1': 'keeps the v0 IsDefault boolean where v1 has the ConfigSource int8',
  'ListOffsetsRequest v4': 'reads CurrentLeaderEpoch as an int64',
  'ListOffsetsRequest v5': 'reads CurrentLeaderEpoch as an int64',
  'FetchRequest v7': 'declares the forgotten topic name with the String class, which cannot decode',
  'FetchRequest v8': 'declares the forgotten topic name with the String class, which cannot decode',
  'FetchRequest v9': 'declares the forgotten topic name with the String class, which cannot decode',
  'FetchRequest v10': 'declares the forgotten topic name with the String class, which cannot decode',
  'FetchRequest v11': 'declares the forgotten topic name with the String class, which cannot decode',
};

interface Job {
  key: number;
  version: number;
  kind: 'request' | 'response';
}

interface Outcome {
  value?: unknown;
  remaining?: number;
  again?: string;
  error?: string;
}

function python(args: string[], input?: string): string {
  const result = spawnSync(PYTHON, ['-c', SCRIPT, ...args], { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`kafka-python script failed: ${result.stderr}`);
  return result.stdout;
}

/** Compares kafka-python's positional decoding with our value, field by field in wire order. */
function compareStruct(
  theirs: unknown,
  ours: Record<string, unknown>,
  struct: StructSchema,
  version: number,
  path: string,
  out: string[],
): void {
  const fields = struct.fields.filter((f) => contains(f.versions, version) && f.tag === null);
  // A struct of one field is the same bytes as that field alone, which is how kafka-python writes some.
  if (fields.length === 1) {
    const [field] = fields as [FieldSchema];
    const unwrapped: string[] = [];
    compareValue(theirs, ours[field.property], field.type, version, path, unwrapped);
    if (unwrapped.length === 0) return;
    if (!Array.isArray(theirs) || theirs.length !== 1) {
      out.push(...unwrapped);
      return;
    }
  }
  if (!Array.isArray(theirs) || theirs.length !== fields.length) {
    out.push(
      `${path}: ${Array.isArray(theirs) ? theirs.length : 'no'} fields where the specification has ${fields.length}`,
    );
    return;
  }
  fields.forEach((field, i) => {
    compareValue(theirs[i], ours[field.property], field.type, version, `${path}.${field.property}`, out);
  });
}

function compareValue(
  theirs: unknown,
  ours: unknown,
  type: FieldType,
  version: number,
  path: string,
  out: string[],
): void {
  if (ours === null || theirs === null) {
    if (ours !== theirs) out.push(`${path}: ${JSON.stringify(theirs)} != ${String(ours)}`);
    return;
  }
  if (type.kind === 'array') {
    const items = ours as unknown[];
    if (!Array.isArray(theirs) || theirs.length !== items.length) {
      out.push(`${path}: array length`);
      return;
    }
    items.forEach((item, i) => {
      compareValue(theirs[i], item, type.element, version, `${path}[${i}]`, out);
    });
    return;
  }
  if (type.kind === 'struct') {
    compareStruct(theirs, ours as Record<string, unknown>, type.struct, version, path, out);
    return;
  }
  let expected: unknown = ours;
  if (Buffer.isBuffer(ours)) expected = { hex: ours.toString('hex') };
  else if (typeof ours === 'number' || typeof ours === 'bigint') expected = String(ours);
  if (JSON.stringify(theirs) !== JSON.stringify(expected)) {
    out.push(`${path}: ${JSON.stringify(theirs)} != ${JSON.stringify(expected)}`);
  }
}

describe('our codecs against kafka-python schemas', () => {
  const pairs = new Map(apiPairs(loadMessages()).map((p) => [p.request.apiKey!, p]));
  const catalogue = (JSON.parse(python(['list'])) as Job[]).filter((job) => {
    const api = findApi(job.key);
    return api !== undefined && job.version <= api.maxVersion;
  });
  const samples = catalogue.map((job) => {
    const pair = pairs.get(job.key)!;
    const message = job.kind === 'request' ? pair.request : pair.response;
    const value = new SampleBuilder({ nulls: false, arrayLength: 2 }).struct(message.root, job.version);
    const api = findApi(job.key)!;
    const w = new Writer();
    (job.kind === 'request' ? api.encodeRequest : api.encodeResponse)(w, job.version, value);
    return { job, message, value, bytes: w.toBuffer() };
  });
  const outcomes = python(
    ['decode'],
    samples.map((s) => JSON.stringify({ ...s.job, hex: s.bytes.toString('hex') })).join('\n'),
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Outcome);

  it('finds over a hundred kafka-python schemas to check against', () => {
    assert.ok(catalogue.length >= 150, `only ${catalogue.length}`);
    assert.equal(outcomes.length, samples.length);
  });

  /** What is wrong with kafka-python's reading of one sample, or an empty list when it agrees with us. */
  function disagreements(i: number): string[] {
    const { job, message, value, bytes } = samples[i]!;
    const outcome = outcomes[i]!;
    if (outcome.error !== undefined) return [`kafka-python failed: ${outcome.error}`];
    const found: string[] = [];
    if (outcome.remaining !== 0) found.push(`kafka-python left ${outcome.remaining} bytes unread`);
    compareStruct(
      outcome.value,
      value as Record<string, unknown>,
      message.root,
      job.version,
      message.name,
      found,
    );
    if (outcome.again !== bytes.toString('hex')) found.push('kafka-python re-encodes to different bytes');
    return found;
  }

  samples.forEach((sample, i) => {
    const what = `${sample.message.name} v${sample.job.version}`;
    const bug = THEIR_BUGS[what];
    if (bug === undefined) {
      it(what, () => {
        assert.deepEqual(disagreements(i), []);
      });
    } else {
      it(`${what}: kafka-python still ${bug}`, () => {
        assert.ok(disagreements(i).length > 0, 'fixed upstream: remove it from THEIR_BUGS');
      });
    }
  });
});
