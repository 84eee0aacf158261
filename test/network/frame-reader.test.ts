import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameError, FrameReader, SCRATCH_READ_BYTES } from '../../src/network/frame-reader.js';

function sizePrefixed(...payloads: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const payload of payloads) {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(payload.length, 0);
    parts.push(prefix, payload);
  }
  return Buffer.concat(parts);
}

function drain(reader: FrameReader): Buffer[] {
  const frames: Buffer[] = [];
  for (let frame = reader.next(); frame !== null; frame = reader.next()) frames.push(frame);
  return frames;
}

const payloads = [
  Buffer.from('first frame'),
  Buffer.alloc(0),
  Buffer.from([1, 2, 3, 4, 5, 6, 7, 8, 9]),
  Buffer.alloc(300, 0xab),
];

describe('FrameReader', () => {
  it('returns every frame of a stream split into two chunks at every byte boundary', () => {
    const stream = sizePrefixed(...payloads);
    for (let cut = 0; cut <= stream.length; cut++) {
      const reader = new FrameReader(1024);
      reader.push(stream.subarray(0, cut));
      const frames = drain(reader);
      reader.push(stream.subarray(cut));
      frames.push(...drain(reader));
      assert.deepEqual(frames, payloads, `cut at ${cut}`);
      assert.equal(reader.bufferedBytes, 0);
      assert.equal(reader.midFrame, false);
    }
  });

  it('returns every frame when the stream arrives one byte at a time', () => {
    const stream = sizePrefixed(...payloads);
    const reader = new FrameReader(1024);
    const frames: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) {
      reader.push(stream.subarray(i, i + 1));
      frames.push(...drain(reader));
    }
    assert.deepEqual(frames, payloads);
  });

  it('returns many frames from one chunk as views of that chunk, without copying', () => {
    const many = Array.from({ length: 1000 }, (_, i) => Buffer.from(`frame-${i}`));
    const stream = sizePrefixed(...many);
    const reader = new FrameReader(1024);
    reader.push(stream);
    const frames = drain(reader);
    assert.deepEqual(frames, many);
    assert.equal(frames[500]!.buffer, stream.buffer, 'a frame inside one chunk shares its memory');
  });

  it('gathers a frame spanning chunks into one buffer only when its last byte arrives', () => {
    const payload = Buffer.alloc(10_000, 7);
    const stream = sizePrefixed(payload);
    const reader = new FrameReader(20_000);
    reader.push(stream.subarray(0, 4000));
    assert.equal(reader.next(), null);
    reader.push(stream.subarray(4000, 8000));
    assert.equal(reader.next(), null);
    assert.equal(reader.bufferedBytes, 8000 - 4);
    reader.push(stream.subarray(8000));
    assert.deepEqual(reader.next(), payload);
  });

  it('refuses a size prefix above the bound before any of the body is kept', () => {
    const reader = new FrameReader(100);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(101, 0);
    reader.push(Buffer.concat([prefix, Buffer.alloc(50)]));
    assert.throws(
      () => reader.next(),
      (e: unknown) => e instanceof FrameError && e.kind === 'oversized' && e.size === 101,
    );
  });

  it('accepts a frame exactly at the bound', () => {
    const reader = new FrameReader(100);
    reader.push(sizePrefixed(Buffer.alloc(100, 1)));
    assert.equal(reader.next()?.length, 100);
  });

  it('refuses a negative size prefix, also when the prefix is split across chunks', () => {
    const reader = new FrameReader(100);
    reader.push(Buffer.from([0xff, 0xff]));
    assert.equal(reader.next(), null);
    reader.push(Buffer.from([0xff, 0xfe]));
    assert.throws(
      () => reader.next(),
      (e: unknown) => e instanceof FrameError && e.kind === 'negative-size' && e.size === -2,
    );
  });

  it("asks for a frame's bytes at its size prefix and takes no body byte until granted", () => {
    let grant = false;
    const asked: number[] = [];
    const reader = new FrameReader(1024, (bytes) => {
      asked.push(bytes);
      return grant;
    });
    const stream = sizePrefixed(Buffer.from('abcdef'));
    reader.push(stream.subarray(0, 4));
    assert.equal(reader.next(), null);
    assert.equal(reader.awaitingReservation, true);
    assert.equal(reader.reservedBytes, 0);
    // A refusal is asked again on the next pull, even with no new bytes in between.
    assert.equal(reader.next(), null);
    assert.deepEqual(asked, [6, 6]);
    reader.push(stream.subarray(4, 7));
    assert.equal(reader.bufferedBytes, 3, 'body bytes stay unread while refused');
    grant = true;
    assert.equal(reader.next(), null);
    assert.equal(reader.reservedBytes, 6);
    reader.push(stream.subarray(7));
    assert.deepEqual(reader.next(), Buffer.from('abcdef'));
    assert.equal(reader.awaitingReservation, false);
    assert.equal(reader.reservedBytes, 0);
  });

  it('returns an empty frame as soon as its prefix arrives', () => {
    const reader = new FrameReader(16);
    reader.push(Buffer.alloc(4));
    assert.deepEqual(reader.next(), Buffer.alloc(0));
    assert.equal(reader.next(), null);
  });

  it('holds frames pulled later when the caller stops between frames of one chunk', () => {
    const reader = new FrameReader(64);
    reader.push(sizePrefixed(Buffer.from('a'), Buffer.from('b')));
    assert.deepEqual(reader.next(), Buffer.from('a'));
    reader.push(sizePrefixed(Buffer.from('c')));
    assert.deepEqual(drain(reader), [Buffer.from('b'), Buffer.from('c')]);
  });

  describe('reading into frames (readBuffer / received)', () => {
    /** Plays the kernel: copies up to `readBytes` of `stream` from `at` into the buffer the reader chose. */
    function readInto(
      reader: FrameReader,
      stream: Buffer,
      at: number,
      readBytes: number,
    ): { n: number; direct: boolean } {
      const target = reader.readBuffer();
      const n = Math.min(readBytes, target.length, stream.length - at);
      stream.copy(target, 0, at, at + n);
      return { n, direct: reader.received(n, target) };
    }

    const mixed = [
      Buffer.alloc(200 * 1024, 1),
      Buffer.from('small'),
      Buffer.alloc(SCRATCH_READ_BYTES + 1, 2),
      Buffer.alloc(0),
      Buffer.alloc(SCRATCH_READ_BYTES - 4, 3),
      Buffer.alloc(128 * 1024 + 100, 4),
      Buffer.from('tail'),
    ];
    for (const [i, frame] of mixed.entries()) if (frame.length > 0) frame[frame.length - 1] = 0x10 + i;

    it('returns every frame whatever the read sizes, large ones read straight into their buffer', () => {
      const stream = sizePrefixed(...mixed.map((f) => Buffer.from(f)));
      for (const readBytes of [1, 7, 4096, SCRATCH_READ_BYTES, 65536, 1 << 20]) {
        const scratch = Buffer.alloc(SCRATCH_READ_BYTES);
        const reader = new FrameReader(1 << 20, null, null, scratch);
        const frames: Buffer[] = [];
        let direct = 0;
        for (let at = 0; at < stream.length; ) {
          const read = readInto(reader, stream, at, readBytes);
          at += read.n;
          if (read.direct) direct += read.n;
          frames.push(...drain(reader));
        }
        assert.deepEqual(frames, mixed, `reads of ${readBytes} bytes`);
        for (const frame of frames) {
          assert.notEqual(frame.buffer, scratch.buffer, 'no frame is a view of the scratch buffer');
        }
        assert.equal(reader.bufferedBytes, 0);
        assert.equal(reader.midFrame, false);
        if (readBytes >= 4096) {
          // Most of the large frames' bytes never passed through the scratch buffer.
          assert.ok(
            direct > stream.length / 2,
            `${direct} of ${stream.length} bytes read straight into frames`,
          );
        }
      }
    });

    it('keeps bytes left in the scratch when the caller stops, though another connection reads into it', () => {
      const stream = sizePrefixed(...mixed.map((f) => Buffer.from(f)));
      const scratch = Buffer.alloc(SCRATCH_READ_BYTES);
      const reader = new FrameReader(1 << 20, null, null, scratch);
      const frames: Buffer[] = [];
      for (let at = 0; at < stream.length; ) {
        at += readInto(reader, stream, at, 5000).n;
        // Take one frame at most, as a connection at its in-flight bound would, and leave the rest.
        const frame = reader.next();
        if (frame !== null) frames.push(frame);
        // The next read (this connection's or another's) may land in the scratch: readBuffer() detaches first.
        const next = reader.readBuffer();
        if (next === scratch) scratch.fill(0xee);
        frames.push(...drain(reader));
      }
      assert.deepEqual(frames, mixed);
    });

    it('takes bytes read into a buffer other than its own as an ordinary chunk', () => {
      const reader = new FrameReader(1024, null, null, Buffer.alloc(SCRATCH_READ_BYTES));
      const other = sizePrefixed(Buffer.from('abc'));
      assert.equal(reader.received(other.length, other), false);
      assert.deepEqual(drain(reader), [Buffer.from('abc')]);
    });
  });
});
