// The benchmark connection's framing: frames cut out of a stream split at every possible place (the size prefix
// included), frames inside one chunk handed over without a copy, a frame spanning chunks gathered into a reused
// buffer, and a size beyond the bound refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameAssembler } from '../../bench/broker/frame-assembler.js';

function framed(payloads: readonly Buffer[]): Buffer {
  return Buffer.concat(
    payloads.flatMap((p) => {
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(p.length, 0);
      return [prefix, p];
    }),
  );
}

describe('FrameAssembler', () => {
  const payloads = [Buffer.from('a'), Buffer.alloc(0), Buffer.from('hello world'), Buffer.alloc(300, 7)];
  const stream = framed(payloads);

  it('yields the same frames wherever the stream is cut, in chunks of every size', () => {
    for (let size = 1; size <= stream.length; size++) {
      const seen: string[] = [];
      const assembler = new FrameAssembler(1024, (frame) => seen.push(frame.toString('hex')));
      for (let at = 0; at < stream.length; at += size) assembler.push(stream.subarray(at, at + size));
      assert.deepEqual(
        seen,
        payloads.map((p) => p.toString('hex')),
        `chunks of ${size}`,
      );
    }
  });

  it('hands a frame inside one chunk over as a view, and reuses one buffer for frames across chunks', () => {
    const views: Buffer[] = [];
    const gathered: boolean[] = [];
    const assembler = new FrameAssembler(1024, (frame, inOwnBuffer) => {
      views.push(frame);
      gathered.push(inOwnBuffer);
    });
    const whole = framed([Buffer.from('inside')]);
    assembler.push(whole);
    assert.equal(views[0]!.buffer, whole.buffer, 'a view of the chunk');
    const spanning = framed([Buffer.alloc(100, 1), Buffer.alloc(50, 2)]);
    assembler.push(spanning.subarray(0, 60));
    assembler.push(spanning.subarray(60, 130));
    assembler.push(spanning.subarray(130));
    assert.equal(views.length, 3);
    assert.equal(views[1]!.buffer, views[2]!.buffer, 'one reused buffer');
    assert.deepEqual(views[2], Buffer.alloc(50, 2));
    assert.deepEqual(gathered, [false, true, true], 'only frames across chunks are gathered');
  });

  it('refuses a frame larger than its bound, and a negative size', () => {
    const assembler = new FrameAssembler(16, () => {});
    assert.throws(() => assembler.push(framed([Buffer.alloc(17)])), /frame of 17 bytes/);
    const negative = Buffer.alloc(4);
    negative.writeInt32BE(-1, 0);
    assert.throws(() => new FrameAssembler(16, () => {}).push(negative), /frame of -1 bytes/);
  });
});
