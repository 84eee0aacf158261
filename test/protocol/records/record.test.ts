import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from '../../../src/protocol/primitives/index.js';
import {
  decodeRecord,
  type RecordToWrite,
  recordSize,
  skipRecord,
  writeRecord,
} from '../../../src/protocol/records/index.js';

function encode(r: RecordToWrite): Buffer {
  const out = Buffer.alloc(recordSize(r));
  assert.equal(writeRecord(out, 0, r), out.length);
  return out;
}

describe('record codec', () => {
  it('round-trips keys, values, headers, null fields and negative or large deltas', () => {
    const cases: RecordToWrite[] = [
      { timestampDelta: 0, offsetDelta: 0, key: null, value: null, headers: [] },
      { timestampDelta: -5, offsetDelta: 3, key: Buffer.from('k'), value: Buffer.alloc(0), headers: [] },
      {
        timestampDelta: 2 ** 45,
        offsetDelta: 2 ** 31 - 1,
        key: Buffer.alloc(300, 1),
        value: Buffer.alloc(70_000, 2),
        headers: [
          { key: Buffer.from('trace-id'), value: Buffer.from('abc') },
          { key: Buffer.from(''), value: null },
          { key: Buffer.from('ünïcödé'), value: Buffer.alloc(200, 3) },
        ],
      },
    ];
    for (const c of cases) {
      const bytes = encode(c);
      const r = decodeRecord(bytes, 0, bytes.length);
      assert.equal(r.timestampDelta, c.timestampDelta);
      assert.equal(r.offsetDelta, c.offsetDelta);
      assert.deepEqual(r.key, c.key === null ? null : Buffer.from(c.key));
      assert.deepEqual(r.value, c.value === null ? null : Buffer.from(c.value));
      assert.deepEqual(
        r.headers.map((h) => [h.key, h.value]),
        c.headers.map((h) => [Buffer.from(h.key).toString(), h.value === null ? null : Buffer.from(h.value)]),
      );
      assert.equal(skipRecord(bytes, 0, bytes.length), c.offsetDelta);
    }
  });

  it('returns views of the input for keys and values, not copies', () => {
    const bytes = encode({
      timestampDelta: 0,
      offsetDelta: 0,
      key: Buffer.from('kk'),
      value: Buffer.from('vv'),
      headers: [],
    });
    const r = decodeRecord(bytes, 0, bytes.length);
    assert.equal(r.key!.buffer, bytes.buffer);
  });

  it('throws a DecodeError for a record cut at every point, from both decoders', () => {
    const bytes = encode({
      timestampDelta: 1000,
      offsetDelta: 1,
      key: Buffer.from('key'),
      value: Buffer.from('value'),
      headers: [{ key: Buffer.from('h'), value: Buffer.from('v') }],
    });
    for (let cut = 0; cut < bytes.length; cut++) {
      assert.throws(() => decodeRecord(bytes, 0, cut), DecodeError, `decode cut ${cut}`);
      assert.throws(() => skipRecord(bytes, 0, cut), DecodeError, `skip cut ${cut}`);
    }
  });

  it('refuses a record whose fields do not end where its length says', () => {
    const good = encode({
      timestampDelta: 0,
      offsetDelta: 0,
      key: null,
      value: Buffer.from('ab'),
      headers: [],
    });
    // Claim one byte more than the fields use, and supply the byte.
    const longer = Buffer.concat([good, Buffer.from([0])]);
    longer[0] = good[0]! + 2;
    assert.throws(
      () => decodeRecord(longer, 0, longer.length),
      (e) => e instanceof DecodeError && e.kind === 'trailing-bytes',
    );
    assert.throws(() => skipRecord(longer, 0, longer.length), DecodeError);
  });

  it('refuses absurd header counts and negative lengths before allocating', () => {
    // length 7: attributes, ts 0, offset 0, key null, value null, headers count 2^30 (as a 5-byte varint)
    const hostile = Buffer.from([0x14, 0, 0, 0, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x08]);
    hostile[0] = (hostile.length - 1) * 2;
    assert.throws(() => decodeRecord(hostile, 0, hostile.length), DecodeError);
    const negativeKey = Buffer.from([0x0c, 0, 0, 0, 5, 1, 0]); // length 6, key length -3
    assert.throws(() => decodeRecord(negativeKey, 0, negativeKey.length), DecodeError);
    const overlongVarint = Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert.throws(() => decodeRecord(overlongVarint, 0, overlongVarint.length), DecodeError);
  });
});
