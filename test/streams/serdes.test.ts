// Serdes write Kafka's byte formats: the expected bytes below are what Kafka's StringSerializer,
// IntegerSerializer, LongSerializer, DoubleSerializer and ByteArraySerializer write for the same values.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Serdes, SerializationError } from '../../src/streams/index.js';

describe('Serdes', () => {
  it('String is UTF-8', () => {
    assert.deepEqual(
      Serdes.String().serialize('t', 'héllo'),
      Buffer.from([0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]),
    );
    assert.equal(Serdes.String().deserialize('t', Buffer.from('68c3a96c6c6f', 'hex')), 'héllo');
  });

  it('Integer is 4-byte big-endian two complement', () => {
    assert.deepEqual(Serdes.Integer().serialize('t', 1), Buffer.from('00000001', 'hex'));
    assert.deepEqual(Serdes.Integer().serialize('t', -2), Buffer.from('fffffffe', 'hex'));
    assert.equal(Serdes.Integer().deserialize('t', Buffer.from('7fffffff', 'hex')), 2147483647);
    assert.throws(() => Serdes.Integer().deserialize('t', Buffer.from('0001', 'hex')), SerializationError);
  });

  it('Long is 8-byte big-endian, refusing values a number cannot hold exactly', () => {
    assert.deepEqual(Serdes.Long().serialize('t', 3), Buffer.from('0000000000000003', 'hex'));
    assert.deepEqual(Serdes.Long().serialize('t', -1), Buffer.from('ffffffffffffffff', 'hex'));
    assert.equal(Serdes.Long().deserialize('t', Buffer.from('0000010000000000', 'hex')), 2 ** 40);
    assert.throws(
      () => Serdes.Long().deserialize('t', Buffer.from('7fffffffffffffff', 'hex')),
      SerializationError,
    );
    assert.equal(Serdes.BigLong().deserialize('t', Buffer.from('7fffffffffffffff', 'hex')), 2n ** 63n - 1n);
  });

  it('Double is 8-byte big-endian IEEE 754', () => {
    assert.deepEqual(Serdes.Double().serialize('t', 1.5), Buffer.from('3ff8000000000000', 'hex'));
    assert.equal(Serdes.Double().deserialize('t', Buffer.from('c000000000000000', 'hex')), -2);
  });

  it('ByteArray passes bytes through; JSON is UTF-8 JSON text', () => {
    const b = Buffer.from([0, 1, 2]);
    assert.equal(Serdes.ByteArray().serialize('t', b), b);
    assert.deepEqual(Serdes.JSON().serialize('t', { a: [1, 'x'] }), Buffer.from('{"a":[1,"x"]}'));
    assert.deepEqual(Serdes.JSON<{ a: number }>().deserialize('t', Buffer.from('{"a":2}')), { a: 2 });
    assert.throws(() => Serdes.JSON().deserialize('t', Buffer.from('{nope')), SerializationError);
  });

  it('null stays null both ways (a tombstone)', () => {
    for (const serde of [Serdes.String(), Serdes.Integer(), Serdes.Long(), Serdes.Double(), Serdes.JSON()]) {
      assert.equal(serde.serialize('t', null), null);
      assert.equal(serde.deserialize('t', null), null);
    }
  });
});
