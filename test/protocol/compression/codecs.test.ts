import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import lz4 from 'lz4-napi';
import snappy from 'snappy';
import binding from 'zstd-napi/binding.js';
import {
  CompressionError,
  CompressionType,
  compress,
  compressionTypeFromName,
  decompress,
  lz4Compress,
  scanLz4Frame,
  snappyCompress,
  snappyCompressRaw,
  xxhash32,
} from '../../../src/protocol/compression/index.js';

const CODECS = [CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd];

function isCompressionError(kind: CompressionError['kind']) {
  return (e: unknown) => e instanceof CompressionError && e.kind === kind;
}

function samples(): Buffer[] {
  return [
    Buffer.alloc(0),
    Buffer.from('x'),
    Buffer.from('the quick brown fox jumps over the lazy dog '.repeat(5000)),
    randomBytes(300_000),
    // Larger than every codec's block size, so multi-block paths run.
    Buffer.concat([randomBytes(100_000), Buffer.alloc(2_000_000, 7), randomBytes(70_000)]),
  ];
}

describe('compression codecs', () => {
  for (const codec of CODECS) {
    it(`codec ${codec} round-trips empty, tiny, text, random and multi-block inputs`, () => {
      for (const data of samples()) {
        const packed = compress(codec, data);
        assert.ok(decompress(codec, packed).equals(data), `size ${data.length}`);
      }
    });

    it(`codec ${codec} refuses output beyond the limit (a decompression bomb)`, () => {
      const bomb = compress(codec, Buffer.alloc(8 * 1024 * 1024));
      assert.ok(bomb.length < 512 * 1024, 'the bomb is small');
      assert.throws(() => decompress(codec, bomb, 1024 * 1024), isCompressionError('too-large'));
      // The same bytes pass when the limit allows them.
      assert.equal(decompress(codec, bomb, 8 * 1024 * 1024).length, 8 * 1024 * 1024);
    });

    it(`codec ${codec} gives a typed error for every truncation and for garbage`, () => {
      const data = Buffer.from('some text to compress, some text to compress'.repeat(50));
      const packed = compress(codec, data);
      for (let cut = 0; cut < packed.length; cut++) {
        try {
          const out = decompress(codec, packed.subarray(0, cut));
          // A cut on a block boundary may decode to a prefix of the data, never to other bytes.
          assert.ok(out.length < data.length && data.subarray(0, out.length).equals(out), `cut ${cut}`);
        } catch (e) {
          assert.ok(e instanceof CompressionError, `cut ${cut}: ${String(e)}`);
        }
      }
      for (let i = 0; i < 50; i++) {
        try {
          decompress(codec, randomBytes(1 + i * 7));
        } catch (e) {
          assert.ok(e instanceof CompressionError, String(e));
        }
      }
    });
  }

  it('refuses bombs made of many concatenated members at the default limit (256 MiB)', () => {
    const mib = Buffer.alloc(1024 * 1024);
    const bombs: [number, Buffer][] = [
      [CompressionType.Gzip, Buffer.concat(Array(300).fill(gzipSync(mib)))],
      [
        CompressionType.Snappy,
        Buffer.concat([snappyCompress(mib), ...Array(300).fill(snappyCompress(mib).subarray(16))]),
      ],
      [CompressionType.Lz4, Buffer.concat(Array(300).fill(lz4Compress(mib)))],
      [CompressionType.Zstd, Buffer.concat(Array(300).fill(compress(CompressionType.Zstd, mib)))],
    ];
    for (const [codec, bomb] of bombs) {
      // snappy cannot expand more than about 20 times, so its "bomb" is the least impressive.
      assert.ok(bomb.length * 15 < 300 * mib.length, `codec ${codec} bomb is ${bomb.length} bytes`);
      const before = process.memoryUsage().arrayBuffers;
      assert.throws(() => decompress(codec, bomb), isCompressionError('too-large'), `codec ${codec}`);
      // snappy, lz4 and zstd refuse from declared sizes before decoding; gzip inflates up to the limit.
      if (codec !== CompressionType.Gzip) {
        assert.ok(process.memoryUsage().arrayBuffers - before < 32 * 1024 * 1024, `codec ${codec} allocated`);
      }
    }
  });

  it('refuses a zstd header that claims a terabyte without allocating it', () => {
    const header = Buffer.alloc(14);
    header.writeUInt32LE(0xfd2fb528, 0);
    header[4] = 0xe0; // 8-byte content size, single segment
    header.writeBigUInt64LE(2n ** 40n, 5);
    const before = process.memoryUsage().arrayBuffers;
    assert.throws(() => decompress(CompressionType.Zstd, header), CompressionError);
    assert.ok(process.memoryUsage().arrayBuffers - before < 32 * 1024 * 1024);
  });

  it('reads lz4 frames with block and content checksums', () => {
    const data = Buffer.from('checksummed '.repeat(30_000));
    const frame = lz4.compressFrameSync(data, { blockChecksums: true, contentChecksum: true });
    assert.equal(frame[4]! & 0x14, 0x14, 'both checksum flags are set');
    assert.ok(decompress(CompressionType.Lz4, frame).equals(data));
  });

  it('refuses unknown codec ids with an unsupported error', () => {
    assert.throws(() => compress(5, Buffer.from('x')), isCompressionError('unsupported'));
    assert.throws(() => decompress(7, Buffer.from('x')), isCompressionError('unsupported'));
  });

  it('names codecs as compression.type does', () => {
    assert.equal(compressionTypeFromName('ZSTD'), CompressionType.Zstd);
    assert.equal(compressionTypeFromName('producer'), undefined);
  });
});

describe('gzip', () => {
  it('reads gzip written by another encoder and concatenated members', () => {
    const a = gzipSync(Buffer.from('first '));
    const b = gzipSync(Buffer.from('second'));
    assert.equal(decompress(CompressionType.Gzip, Buffer.concat([a, b])).toString(), 'first second');
  });
});

describe('snappy', () => {
  const text = Buffer.from('snappy framing test '.repeat(4000)); // 80 000 bytes: three xerial blocks

  it('writes the xerial framing that Kafka Java writes: magic, version 1, compatible 1, 32 KiB blocks', () => {
    const packed = snappyCompress(text);
    assert.deepEqual([...packed.subarray(0, 8)], [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
    assert.equal(packed.readInt32BE(8), 1);
    assert.equal(packed.readInt32BE(12), 1);
    let pos = 16;
    const blockLengths: number[] = [];
    while (pos < packed.length) {
      const length = packed.readInt32BE(pos);
      const block = packed.subarray(pos + 4, pos + 4 + length);
      blockLengths.push((snappy.uncompressSync(block, { asBuffer: true }) as Buffer).length);
      pos += 4 + length;
    }
    assert.equal(pos, packed.length);
    assert.deepEqual(blockLengths, [32768, 32768, 80000 - 65536]);
  });

  it('decodes both raw snappy and the xerial framing', () => {
    assert.ok(decompress(CompressionType.Snappy, snappyCompressRaw(text)).equals(text));
    assert.ok(decompress(CompressionType.Snappy, snappyCompress(text)).equals(text));
  });

  it('decodes concatenated xerial streams', () => {
    const both = Buffer.concat([snappyCompress(Buffer.from('abc')), snappyCompress(Buffer.from('def'))]);
    assert.equal(decompress(CompressionType.Snappy, both).toString(), 'abcdef');
  });

  it('refuses a raw block whose declared length exceeds the limit before decoding it', () => {
    // Preamble 0xffffffff (5-byte varint), then nothing: only the declared length can be judged.
    const liar = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    assert.throws(() => decompress(CompressionType.Snappy, liar), isCompressionError('too-large'));
  });

  it('refuses xerial blocks whose lengths run past the input', () => {
    const packed = snappyCompress(text);
    packed.writeInt32BE(1 << 30, 16);
    assert.throws(() => decompress(CompressionType.Snappy, packed), isCompressionError('corrupt'));
  });
});

describe('lz4', () => {
  it('computes xxHash32 test vectors', () => {
    assert.equal(xxhash32(Buffer.alloc(0)), 0x02cc5d05);
    assert.equal(xxhash32(Buffer.from('abc')), 0x32d153ff);
    // Longer than 16 bytes exercises the four-lane loop; cross-checked against lz4's own frame checksum below.
    const frame = lz4Compress(Buffer.from('0123456789abcdef0123456789'));
    assert.ok(scanLz4Frame(frame, 0).hcValid);
  });

  it("knows Kafka's header checksum for FLG 0x60 BD 0x40: 0x82 correct, 0x1A over the magic (KAFKA-3160)", () => {
    const header = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40]);
    assert.equal((xxhash32(header, 4, 6) >>> 8) & 0xff, 0x82);
    assert.equal((xxhash32(header, 0, 6) >>> 8) & 0xff, 0x1a);
  });

  it('writes the broken checksum for magic 0 and reads it only for legacy magics', () => {
    const data = Buffer.from('legacy lz4 '.repeat(100));
    const v0 = compress(CompressionType.Lz4, data, { magic: 0 });
    const frame = scanLz4Frame(v0, 0);
    assert.equal(frame.hcValid, false);
    assert.equal(frame.hcBroken, true);
    const copy = Buffer.from(v0);
    assert.ok(decompress(CompressionType.Lz4, v0, undefined, { magic: 0 }).equals(data));
    assert.ok(decompress(CompressionType.Lz4, v0, undefined, { magic: 1 }).equals(data));
    assert.ok(v0.equals(copy), 'the input is not patched in place');
    assert.throws(() => decompress(CompressionType.Lz4, v0), isCompressionError('corrupt'));
    assert.throws(
      () => decompress(CompressionType.Lz4, v0, undefined, { magic: 2 }),
      isCompressionError('corrupt'),
    );
    // Magic 1 and 2 are written with the correct checksum.
    assert.ok(scanLz4Frame(compress(CompressionType.Lz4, data, { magic: 1 }), 0).hcValid);
  });

  it('refuses a header checksum that is neither correct nor the legacy variant', () => {
    const packed = lz4Compress(Buffer.from('abc'.repeat(100)));
    const hc = scanLz4Frame(packed, 0).hcPosition;
    packed[hc] = packed[hc]! ^ 0x55;
    assert.throws(
      () => decompress(CompressionType.Lz4, packed, undefined, { magic: 0 }),
      isCompressionError('corrupt'),
    );
  });

  it('bounds output by block count before decoding: many tiny blocks that each claim a full block', () => {
    const block = lz4Compress(Buffer.alloc(64 * 1024));
    const frame = scanLz4Frame(block, 0);
    assert.ok(frame.outputBytesMax >= 64 * 1024);
    assert.throws(() => decompress(CompressionType.Lz4, block, 1000), isCompressionError('too-large'));
  });

  /**
   * A frame of 64 KiB independent blocks written by hand (lz4-napi picks 4 MiB blocks past 256 KiB): `pieces` of
   * at most 64 KiB each, every one compressed with lz4's block format, or stored as it is when `stored`.
   */
  function frameOf(pieces: readonly { data: Buffer; stored?: boolean }[]): Buffer {
    const descriptor = Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0]);
    descriptor[6] = (xxhash32(descriptor, 4, 6) >>> 8) & 0xff;
    const blocks = pieces.map(({ data, stored }) => {
      assert.ok(data.length <= 64 * 1024);
      const body = stored ? data : lz4.compressSync(data).subarray(4); // the block call prefixes the size
      const size = Buffer.alloc(4);
      size.writeUInt32LE((body.length | (stored ? 0x80000000 : 0)) >>> 0);
      return Buffer.concat([size, body]);
    });
    return Buffer.concat([descriptor, ...blocks, Buffer.alloc(4)]);
  }

  function mixedPieces(): { data: Buffer; stored?: boolean }[] {
    const text = (word: string) => Buffer.from(word.repeat(64 * 1024)).subarray(0, 64 * 1024);
    return [
      { data: text('one ') },
      { data: randomBytes(64 * 1024), stored: true },
      { data: text('three ').subarray(0, 1000) },
    ];
  }

  it('decodes frames of several blocks, compressed and stored, block by block', () => {
    const pieces = mixedPieces();
    const data = Buffer.concat(pieces.map((p) => p.data));
    const frame = frameOf(pieces);
    const scanned = scanLz4Frame(frame, 0);
    assert.ok(scanned.hcValid && scanned.blocksIndependent && scanned.blockMax === 64 * 1024);
    assert.ok(decompress(CompressionType.Lz4, frame).equals(data));
    // Two frames back to back, as a legacy wrapper's value may hold.
    assert.ok(
      decompress(CompressionType.Lz4, Buffer.concat([frame, frame])).equals(Buffer.concat([data, data])),
    );
  });

  it('refuses a block whose checksum does not match, as Kafka does', () => {
    const data = Buffer.from('checksummed '.repeat(30_000));
    const frame = lz4.compressFrameSync(data, { blockChecksums: true, contentChecksum: false });
    const scanned = scanLz4Frame(frame, 0);
    const size = frame.readUInt32LE(scanned.blocksStart) & 0x7fffffff;
    const checksumAt = scanned.blocksStart + 4 + size;
    frame[checksumAt] = frame[checksumAt]! ^ 0x01;
    assert.throws(() => decompress(CompressionType.Lz4, frame), isCompressionError('corrupt'));
  });

  it('decodes a frame of linked blocks through the frame decoder', () => {
    const pieces = mixedPieces();
    const data = Buffer.concat(pieces.map((p) => p.data));
    const frame = frameOf(pieces);
    const scanned = scanLz4Frame(frame, 0);
    // Clear the block independence flag and write the descriptor checksum again: independent blocks are valid
    // linked blocks (they just never refer back), so the content is the same.
    frame[4] = frame[4]! & ~0x20;
    frame[scanned.hcPosition] = (xxhash32(frame, 4, scanned.hcPosition) >>> 8) & 0xff;
    assert.equal(scanLz4Frame(frame, 0).blocksIndependent, false);
    assert.ok(decompress(CompressionType.Lz4, frame).equals(data));
  });

  it('refuses a compressed block that decodes past the frame block maximum', () => {
    // A frame whose descriptor says 64 KiB blocks, holding one block that decodes to 128 KiB.
    const block = lz4.compressSync(Buffer.alloc(128 * 1024, 7)).subarray(4);
    const frame = frameOf([{ data: Buffer.alloc(10) }]);
    const size = Buffer.alloc(4);
    size.writeUInt32LE(block.length);
    const bad = Buffer.concat([frame.subarray(0, 7), size, block, Buffer.alloc(4)]);
    assert.ok(scanLz4Frame(bad, 0).hcValid);
    assert.throws(() => decompress(CompressionType.Lz4, bad), isCompressionError('corrupt'));
  });
});

describe('zstd', () => {
  it('decodes frames without a declared content size through the bounded streaming path', () => {
    const cctx = new binding.CCtx();
    cctx.setParameter(binding.CParameter.contentSizeFlag, 0);
    const data = Buffer.alloc(4 * 1024 * 1024, 3);
    const out = Buffer.alloc(binding.compressBound(data.length));
    const packed = out.subarray(0, cctx.compress2(out, data));
    assert.equal(binding.getFrameContentSize(packed), null);
    assert.ok(decompress(CompressionType.Zstd, packed).equals(data));
    assert.throws(
      () => decompress(CompressionType.Zstd, packed, 1024 * 1024),
      isCompressionError('too-large'),
    );
  });

  it('refuses a frame that declares more content than the limit', () => {
    const packed = compress(CompressionType.Zstd, Buffer.alloc(2 * 1024 * 1024));
    assert.throws(
      () => decompress(CompressionType.Zstd, packed, 1024 * 1024),
      isCompressionError('too-large'),
    );
  });
});
