import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodeError } from '../../../src/protocol/primitives/index.js';
import { readVarint, varintEnd, varintSize, writeVarint } from '../../../src/protocol/records/varint.js';

// readVarint decodes one- and two-byte varints inline and the rest in a loop: these values sit on each side of
// every width change, so each path, and the hand-over between them, is crossed.
const boundaries = [
  0,
  -1,
  1,
  63,
  -64,
  64,
  -65,
  8191,
  -8192,
  8192,
  -8193,
  1_048_575,
  -1_048_576,
  2 ** 31 - 1,
  -(2 ** 31),
];

describe('record varints', () => {
  it('read back every width, whether the varint ends the input or bytes follow it', () => {
    for (const v of boundaries) {
      const size = varintSize(v);
      for (const trailing of [0, 3]) {
        const buf = Buffer.alloc(1 + size + trailing, 0x7f);
        assert.equal(writeVarint(buf, 1, v), 1 + size);
        assert.equal(readVarint(buf, 1, 1 + size + trailing), v, `value ${v}, ${trailing} bytes after`);
        assert.equal(varintEnd, 1 + size, `end of ${v}`);
      }
    }
  });

  it('refuse a varint cut by the end of the input, at every width', () => {
    for (const v of boundaries) {
      const size = varintSize(v);
      if (size === 1) continue;
      const buf = Buffer.alloc(size + 2, 0x01);
      writeVarint(buf, 0, v);
      for (let end = 0; end < size; end++) {
        assert.throws(
          () => readVarint(buf, 0, end),
          (err: unknown) => err instanceof DecodeError,
          `${v} cut after ${end} bytes`,
        );
      }
    }
  });

  it('refuse a varint longer than five bytes', () => {
    const buf = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert.throws(
      () => readVarint(buf, 0, buf.length),
      (err: unknown) => err instanceof DecodeError,
    );
  });
});
