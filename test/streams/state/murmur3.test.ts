// Kafka's Murmur3.hash128 (the foreign-key join's value hash): Kafka's own test vectors (Murmur3Test, seed 123),
// SMHasher's verification value of MurmurHash3_x64_128 (every length 0..255, every tail), and a BigInt
// transcription of the algorithm over seeded inputs with Kafka's default seed and a negative one.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MURMUR3_DEFAULT_SEED, murmur3Hash128 } from '../../../src/streams/state/murmur3.js';
import { seeded } from '../streams-helpers.js';

/** The hash as Java's two signed longs. */
const longs = (h: Buffer) => [h.readBigInt64BE(0), h.readBigInt64BE(8)];

// A straightforward reference in BigInt, written from the algorithm's description (not from the code under test).
const M64 = (1n << 64n) - 1n;
const C1 = 0x87c37b91114253d5n;
const C2 = 0x4cf5ad432745937fn;
const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M64;
const fmix = (h: bigint) => {
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & M64;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & M64;
  return h ^ (h >> 33n);
};
function reference(data: Uint8Array, seed: number): bigint[] {
  let h1 = BigInt.asUintN(64, BigInt(seed));
  let h2 = h1;
  const le = (at: number, n: number) => {
    let k = 0n;
    for (let i = n - 1; i >= 0; i--) k = (k << 8n) | BigInt(data[at + i]!);
    return k;
  };
  const k1mix = (k: bigint) => (rotl((k * C1) & M64, 31n) * C2) & M64;
  const k2mix = (k: bigint) => (rotl((k * C2) & M64, 33n) * C1) & M64;
  const blocks = Math.floor(data.length / 16);
  for (let b = 0; b < blocks; b++) {
    h1 ^= k1mix(le(b * 16, 8));
    h1 = (((rotl(h1, 27n) + h2) & M64) * 5n + 0x52dce729n) & M64;
    h2 ^= k2mix(le(b * 16 + 8, 8));
    h2 = (((rotl(h2, 31n) + h1) & M64) * 5n + 0x38495ab5n) & M64;
  }
  const tail = data.length - blocks * 16;
  if (tail > 8) h2 ^= k2mix(le(blocks * 16 + 8, tail - 8));
  if (tail > 0) h1 ^= k1mix(le(blocks * 16, Math.min(tail, 8)));
  h1 ^= BigInt(data.length);
  h2 ^= BigInt(data.length);
  h1 = (h1 + h2) & M64;
  h2 = (h2 + h1) & M64;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) & M64;
  h2 = (h2 + h1) & M64;
  return [BigInt.asIntN(64, h1), BigInt.asIntN(64, h2)];
}

describe('murmur3 128 (Kafka Murmur3.hash128)', () => {
  it("equals Kafka's Murmur3Test vectors (seed 123)", () => {
    const cases: [Uint8Array, bigint[]][] = [
      [Buffer.from('21'), [5857341059704281894n, -5288187638297930763n]],
      [Buffer.from('foobar'), [-351361463397418609n, 8959716011862540668n]],
      [Buffer.from('a-little-bit-long-string'), [8836256500583638442n, -198172363548498523n]],
      [Buffer.from('a-little-bit-longer-string'), [1838346159335108511n, 8794688210320490705n]],
      [
        Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'),
        [-4024021876037397259n, -1482317706335141238n],
      ],
      [Buffer.from('abc'), [1489494923063836066n, -5440978547625122829n]],
    ];
    for (const [data, expected] of cases) assert.deepEqual(longs(murmur3Hash128(data, 123)), expected);
  });

  it("passes SMHasher's verification of MurmurHash3_x64_128 (0x6384BA69)", () => {
    // Keys {0}, {0,1}, ... of lengths 0..255 hashed with seed 256 - length; the 256 results (each h1 then h2
    // little-endian, the C function's output bytes) hashed with seed 0; the first 4 bytes little-endian.
    const key = Uint8Array.from({ length: 256 }, (_, i) => i);
    const all = Buffer.alloc(256 * 16);
    const littleEndian = (h: Buffer, into: Buffer, at: number) => {
      into.writeBigUInt64LE(h.readBigUInt64BE(0), at);
      into.writeBigUInt64LE(h.readBigUInt64BE(8), at + 8);
    };
    for (let i = 0; i < 256; i++) littleEndian(murmur3Hash128(key.subarray(0, i), 256 - i), all, i * 16);
    const final = Buffer.alloc(16);
    littleEndian(murmur3Hash128(all, 0), final, 0);
    assert.equal(final.readUInt32LE(0), 0x6384ba69);
  });

  it('equals a BigInt transcription over 500 seeded inputs, default and negative seeds', () => {
    const random = seeded(3);
    for (let n = 0; n < 500; n++) {
      const data = Buffer.from(
        Array.from({ length: Math.floor(random() * 90) }, () => Math.floor(random() * 256)),
      );
      const seed = n % 5 === 0 ? -Math.floor(random() * 2 ** 31) : MURMUR3_DEFAULT_SEED;
      assert.deepEqual(longs(murmur3Hash128(data, seed)), reference(data, seed), `length ${data.length}`);
    }
  });

  it('defaults to seed 104729 and writes h1 then h2 big-endian', () => {
    const h = murmur3Hash128(Buffer.from('o1-value'));
    assert.deepEqual(longs(h), reference(Buffer.from('o1-value'), 104729));
    assert.equal(h.length, 16);
  });
});
