// The test helper that splits a byte stream into size-prefixed frames: whatever the chunking, the same frames,
// with or without their prefix; the bytes after the last whole frame kept for peek and takeBuffered; a negative
// or oversized size prefix thrown as soon as it is read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameSplitter } from './frame-splitter.js';

function sizePrefixed(body: Buffer): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(body.length, 0);
  return Buffer.concat([prefix, body]);
}

const bodies = [Buffer.from('first'), Buffer.alloc(0), Buffer.alloc(3000, 7), Buffer.from('last')];
const stream = Buffer.concat(bodies.map(sizePrefixed));

describe('FrameSplitter', () => {
  it('hands out the same frames however the stream is cut into chunks', () => {
    for (const chunkBytes of [1, 2, 3, 5, 4096, stream.length]) {
      const stripped = new FrameSplitter({ sizePrefix: 'strip' });
      const kept = new FrameSplitter({ sizePrefix: 'keep' });
      const frames: Buffer[] = [];
      const whole: Buffer[] = [];
      for (let pos = 0; pos < stream.length; pos += chunkBytes) {
        const chunk = stream.subarray(pos, pos + chunkBytes);
        stripped.push(chunk);
        kept.push(chunk);
        frames.push(...stripped.frames());
        whole.push(...kept.frames());
      }
      assert.deepEqual(frames, bodies, `chunks of ${chunkBytes}`);
      assert.deepEqual(whole, bodies.map(sizePrefixed), `chunks of ${chunkBytes}`);
      assert.equal(stripped.bufferedBytes, 0);
    }
  });

  it('keeps the start of an incomplete frame for peek and takeBuffered', () => {
    const splitter = new FrameSplitter({ sizePrefix: 'keep' });
    const partial = sizePrefixed(Buffer.from('incomplete')).subarray(0, 9);
    splitter.push(Buffer.concat([sizePrefixed(Buffer.from('done')), partial.subarray(0, 2)]));
    splitter.push(partial.subarray(2));
    assert.deepEqual(splitter.next(), sizePrefixed(Buffer.from('done')));
    assert.equal(splitter.next(), null);
    assert.equal(splitter.peek(10), null);
    assert.deepEqual(splitter.peek(6), partial.subarray(0, 6));
    assert.deepEqual(splitter.takeBuffered(), partial);
    assert.equal(splitter.bufferedBytes, 0);
    assert.equal(splitter.next(), null);
  });

  it('throws on a negative size prefix or one above the bound', () => {
    const negative = new FrameSplitter({ sizePrefix: 'strip' });
    negative.push(Buffer.from([0xff, 0xff, 0xff, 0xfe]));
    assert.throws(() => negative.next(), RangeError);
    const oversized = new FrameSplitter({ sizePrefix: 'strip', frameBytesMax: 100 });
    oversized.push(Buffer.from([0, 0, 0, 101]));
    assert.throws(() => oversized.next(), /frame size 101 is outside 0..100/);
    const atBound = new FrameSplitter({ sizePrefix: 'strip', frameBytesMax: 100 });
    atBound.push(sizePrefixed(Buffer.alloc(100, 1)));
    assert.deepEqual(atBound.next(), Buffer.alloc(100, 1));
  });
});
