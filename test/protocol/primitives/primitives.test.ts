import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError, Reader, Writer } from '../../../src/protocol/primitives/index.js';

function expectDecodeError(fn: () => unknown, kind: DecodeError['kind']): void {
  assert.throws(fn, (e: unknown) => e instanceof DecodeError && e.kind === kind);
}

describe('primitives', () => {
  it('round-trips fixed-width integers, floats, booleans and uuids at their limits', () => {
    const uuid = Buffer.from('00112233445566778899aabbccddeeff', 'hex').toString('base64url');
    const w = new Writer(1)
      .int8(-128)
      .int16(32767)
      .uint16(65535)
      .int32(-2147483648)
      .uint32(4294967295)
      .int64(-(2n ** 63n))
      .float64(-1.5)
      .bool(true)
      .uuid(uuid);
    const r = new Reader(w.toBuffer());
    assert.equal(r.int8(), -128);
    assert.equal(r.int16(), 32767);
    assert.equal(r.uint16(), 65535);
    assert.equal(r.int32(), -2147483648);
    assert.equal(r.uint32(), 4294967295);
    assert.equal(r.int64(), -(2n ** 63n));
    assert.equal(r.float64(), -1.5);
    assert.equal(r.bool(), true);
    assert.equal(r.uuid(), uuid);
    r.expectEnd();
  });

  it('encodes varints as Kafka does (zigzag, LEB128)', () => {
    assert.deepEqual([...new Writer().uvarint(300).toBuffer()], [0xac, 0x02]);
    assert.deepEqual([...new Writer().varint(-1).toBuffer()], [0x01]);
    assert.deepEqual([...new Writer().varint(1).toBuffer()], [0x02]);
    assert.deepEqual([...new Writer().varint(-64).toBuffer()], [0x7f]);
    for (const v of [0, 1, -1, 63, -64, 64, 2147483647, -2147483648]) {
      assert.equal(new Reader(new Writer().varint(v).toBuffer()).varint(), v);
    }
    for (const v of [0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 1234567890123n]) {
      assert.equal(new Reader(new Writer().varlong(v).toBuffer()).varlong(), v);
    }
    assert.equal(new Reader(new Writer().uvarint(0xffffffff).toBuffer()).uvarint(), 0xffffffff);
  });

  it('round-trips plain, nullable and compact strings and bytes', () => {
    const w = new Writer()
      .string('héllo')
      .nullableString(null)
      .compactString('')
      .compactNullableString(null)
      .compactNullableString('x')
      .bytes(Buffer.from([1, 2]))
      .nullableBytes(null)
      .compactBytes(Buffer.alloc(0))
      .compactNullableBytes(null);
    const r = new Reader(w.toBuffer());
    assert.equal(r.string(), 'héllo');
    assert.equal(r.nullableString(), null);
    assert.equal(r.compactString(), '');
    assert.equal(r.compactNullableString(), null);
    assert.equal(r.compactNullableString(), 'x');
    assert.deepEqual([...r.bytes()], [1, 2]);
    assert.equal(r.nullableBytes(), null);
    assert.equal(r.compactBytes().length, 0);
    assert.equal(r.compactNullableBytes(), null);
    r.expectEnd();
  });

  it('attaches large byte fields by reference and still produces the same bytes', () => {
    const big = Buffer.alloc(10_000, 7);
    const w = new Writer().int32(1).bytes(big).int16(2);
    const chunks = w.chunksOut();
    assert.ok(chunks.includes(big), 'the large buffer is one of the chunks, not a copy');
    const r = new Reader(w.toBuffer());
    assert.equal(r.int32(), 1);
    assert.ok(r.bytes().equals(big));
    assert.equal(r.int16(), 2);
    r.expectEnd();
  });

  it('rejects truncated input, negative and oversized lengths, and overlong varints with typed errors', () => {
    expectDecodeError(() => new Reader(Buffer.from([0, 0, 0])).int32(), 'truncated');
    expectDecodeError(() => new Reader(Buffer.from([0xff, 0xfe])).string(), 'negative-length');
    expectDecodeError(() => new Reader(Buffer.from([0x00, 0x10, 0x61])).string(), 'length-exceeds-input');
    expectDecodeError(
      () => new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff])).bytes(),
      'length-exceeds-input',
    );
    expectDecodeError(
      () => new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff])).arrayCount(),
      'length-exceeds-input',
    );
    expectDecodeError(
      () => new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])).uvarint(),
      'bad-varint',
    );
    expectDecodeError(() => new Reader(Buffer.from([0x80, 0x80])).uvarint(), 'truncated');
    expectDecodeError(() => new Reader(Buffer.from([0x00])).compactString(), 'bad-value');
    expectDecodeError(() => new Reader(Buffer.from([1, 2])).expectEnd(), 'trailing-bytes');
  });
});
