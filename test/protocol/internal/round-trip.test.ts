// Internal-topic schemas, headers and the consumer protocol: every version round-trips with every field set;
// consumer protocol blobs keep Kafka's forward-compatibility rule.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  consumerProtocolAssignmentSchema,
  consumerProtocolSubscriptionSchema,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
} from '../../../src/protocol/consumer-protocol/index.js';
import { loadInternal, loadMessages } from '../../../src/protocol/generator/generate.js';
import type { MessageSchema } from '../../../src/protocol/generator/schema.js';
import { INTERNAL_SCHEMAS } from '../../../src/protocol/internal/index.js';
import {
  type DataSchema,
  decodeVersioned,
  encodeVersioned,
} from '../../../src/protocol/messages/codec-support.js';
import { requestHeaderSchema } from '../../../src/protocol/messages/request-header.js';
import { responseHeaderSchema } from '../../../src/protocol/messages/response-header.js';
import { DecodeError, Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { SampleBuilder } from '../messages/sample-values.js';

const internal = loadInternal();
const byName = new Map(loadMessages().map((m) => [m.name, m]));

function roundTripEveryVersion(message: MessageSchema, schema: DataSchema): void {
  assert.equal(schema.minVersion, message.validVersions.min);
  assert.equal(schema.maxVersion, message.validVersions.max);
  for (let version = schema.minVersion; version <= schema.maxVersion; version++) {
    for (const nulls of [false, true]) {
      const what = `${message.name} v${version}${nulls ? ' with nulls' : ''}`;
      const value = new SampleBuilder({ nulls, arrayLength: 2 }).struct(message.root, version);
      const w = new Writer();
      schema.encode(w, version, value);
      const bytes = w.toBuffer();
      const r = new Reader(bytes);
      assert.deepEqual(schema.decode(r, version), value, what);
      assert.equal(r.remaining, 0, what);
      const prefixed = encodeVersioned(schema, version, value);
      assert.equal(prefixed.readInt16BE(0), version);
      assert.deepEqual(decodeVersioned(schema, prefixed, 'reject'), { version, value }, what);
    }
  }
}

describe('internal-topic schemas round-trip every version with every field set', () => {
  it('cover every schema in the specification folder', () => {
    assert.deepEqual(INTERNAL_SCHEMAS.map((s) => s.name).sort(), internal.map((m) => m.name).sort());
  });
  for (const message of internal) {
    it(message.name, () => {
      const schema = INTERNAL_SCHEMAS.find((s) => s.name === message.name)!;
      roundTripEveryVersion(message, schema);
    });
  }
});

describe('headers and the consumer protocol round-trip every version', () => {
  it('request and response headers', () => {
    roundTripEveryVersion(byName.get('RequestHeader')!, requestHeaderSchema);
    roundTripEveryVersion(byName.get('ResponseHeader')!, responseHeaderSchema);
  });

  it('consumer protocol subscription and assignment', () => {
    roundTripEveryVersion(byName.get('ConsumerProtocolSubscription')!, consumerProtocolSubscriptionSchema);
    roundTripEveryVersion(byName.get('ConsumerProtocolAssignment')!, consumerProtocolAssignmentSchema);
  });
});

describe('consumer protocol blobs', () => {
  const subscription = {
    topics: ['orders', 'payments'],
    userData: Buffer.from([1, 2]),
    ownedPartitions: [{ topic: 'orders', partitions: [0, 2] }],
    generationId: 5,
    rackId: 'rack-a',
  };

  it('write a v3 subscription with the documented layout', () => {
    const bytes = encodeSubscription(3, subscription);
    const expected = Buffer.concat([
      Buffer.from('0003', 'hex'),
      Buffer.from('00000002', 'hex'),
      Buffer.from('0006', 'hex'),
      Buffer.from('orders'),
      Buffer.from('0008', 'hex'),
      Buffer.from('payments'),
      Buffer.from('00000002 0102'.replace(' ', ''), 'hex'),
      Buffer.from('00000001 0006'.replace(' ', ''), 'hex'),
      Buffer.from('orders'),
      Buffer.from('00000002 00000000 00000002'.replace(/ /g, ''), 'hex'),
      Buffer.from('00000005 0006'.replace(' ', ''), 'hex'),
      Buffer.from('rack-a'),
    ]);
    assert.deepEqual(bytes, expected);
  });

  it('read a subscription from a newer version by its known fields, ignoring what follows', () => {
    const bytes = encodeSubscription(3, subscription);
    const newer = Buffer.concat([bytes, Buffer.from([0xde, 0xad])]);
    newer.writeInt16BE(7, 0);
    const decoded = decodeSubscription(newer);
    assert.equal(decoded.version, 7);
    assert.deepEqual(decoded.value, subscription);
  });

  it('read a v0 subscription with defaults for the fields it lacks', () => {
    const decoded = decodeSubscription(encodeSubscription(0, subscription));
    assert.equal(decoded.version, 0);
    assert.deepEqual(decoded.value, {
      topics: ['orders', 'payments'],
      userData: Buffer.from([1, 2]),
      ownedPartitions: [],
      generationId: -1,
      rackId: null,
    });
  });

  it('round-trip an assignment and reject a negative version with a DecodeError', () => {
    const assignment = { assignedPartitions: [{ topic: 't', partitions: [1] }], userData: null };
    assert.deepEqual(decodeAssignment(encodeAssignment(1, assignment)), { version: 1, value: assignment });
    const bad = encodeAssignment(1, assignment);
    bad.writeInt16BE(-1, 0);
    assert.throws(
      () => decodeAssignment(bad),
      (e: unknown) => e instanceof DecodeError && e.kind === 'unsupported-version',
    );
  });
});
