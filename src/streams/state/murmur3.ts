// MurmurHash3 x64 128-bit, as Kafka Streams computes it (org.apache.kafka.streams.state.internals.Murmur3.hash128,
// itself Hive's port of Austin Appleby's MurmurHash3_x64_128): the foreign-key join hashes each serialized left
// value with it and sends the hash with its subscription; the response carries it back and the resolver drops any
// response whose hash is not that of the row's current value. Brook must compute the same 16 bytes as Java so
// that Brook and Java instances of one application (or a Brook application reading topics a Java one wrote)
// agree on which responses are stale.
//
// Kafka's default seed is 104729; its result is two longs (h1, h2), written on the wire as two big-endian int64.
// The 64-bit arithmetic is done on pairs of unsigned 32-bit halves (no BigInt: this runs per left change and per
// response). Kafka hashes no null values: a null value has a null hash, which the callers handle.

/** Kafka's Murmur3.DEFAULT_SEED. */
export const MURMUR3_DEFAULT_SEED = 104729;

// The 64-bit state: h1, h2 and the two block words, each as high and low 32 bits (unsigned).
let h1Hi = 0;
let h1Lo = 0;
let h2Hi = 0;
let h2Lo = 0;
// The result of the last mul / rotl / fmix call.
let rHi = 0;
let rLo = 0;

const C1_HI = 0x87c37b91;
const C1_LO = 0x114253d5;
const C2_HI = 0x4cf5ad43;
const C2_LO = 0x2745937f;
const N1 = 0x52dce729;
const N2 = 0x38495ab5;

/** (aHi:aLo) * (bHi:bLo) mod 2^64 into rHi:rLo. */
function mul(aHi: number, aLo: number, bHi: number, bLo: number): void {
  // The full product of the low words, from 16-bit pieces so that nothing exceeds 2^53.
  const a0 = aLo & 0xffff;
  const a1 = aLo >>> 16;
  const b0 = bLo & 0xffff;
  const b1 = bLo >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  rLo = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const hi = p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  rHi = (hi + Math.imul(aHi, bLo) + Math.imul(aLo, bHi)) >>> 0;
}

/** Rotates (hi:lo) left by n bits (0 < n < 64, n !== 32) into rHi:rLo. */
function rotl(hi: number, lo: number, n: number): void {
  if (n > 32) {
    const t = hi;
    hi = lo;
    lo = t;
    n -= 32;
  }
  rHi = ((hi << n) | (lo >>> (32 - n))) >>> 0;
  rLo = ((lo << n) | (hi >>> (32 - n))) >>> 0;
}

/** (aHi:aLo) + (bHi:bLo) mod 2^64 into rHi:rLo. */
function add(aHi: number, aLo: number, bHi: number, bLo: number): void {
  const lo = aLo + bLo;
  rLo = lo >>> 0;
  rHi = (aHi + bHi + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** Murmur3's finalizer fmix64 into rHi:rLo. */
function fmix(hi: number, lo: number): void {
  lo = (lo ^ (hi >>> 1)) >>> 0; // h ^= h >>> 33
  mul(hi, lo, 0xff51afd7, 0xed558ccd);
  hi = rHi;
  lo = (rLo ^ (hi >>> 1)) >>> 0;
  mul(hi, lo, 0xc4ceb9fe, 0x1a85ec53);
  hi = rHi;
  lo = (rLo ^ (hi >>> 1)) >>> 0;
  rHi = hi;
  rLo = lo;
}

/** Little-endian 32-bit word of `data` at `i` (bytes past `end` read as zero, for the tail). */
function word(data: Uint8Array, i: number, end: number): number {
  let w = 0;
  for (let b = 3; b >= 0; b--) w = (w << 8) | (i + b < end ? data[i + b]! : 0);
  return w >>> 0;
}

/** k1 through its mix (C1, rotl 31, C2) xored into h1. */
function mixK1(kHi: number, kLo: number): void {
  mul(kHi, kLo, C1_HI, C1_LO);
  rotl(rHi, rLo, 31);
  mul(rHi, rLo, C2_HI, C2_LO);
  h1Hi = (h1Hi ^ rHi) >>> 0;
  h1Lo = (h1Lo ^ rLo) >>> 0;
}

/** k2 through its mix (C2, rotl 33, C1) xored into h2. */
function mixK2(kHi: number, kLo: number): void {
  mul(kHi, kLo, C2_HI, C2_LO);
  rotl(rHi, rLo, 33);
  mul(rHi, rLo, C1_HI, C1_LO);
  h2Hi = (h2Hi ^ rHi) >>> 0;
  h2Lo = (h2Lo ^ rLo) >>> 0;
}

/** h = h * 5 + n (n a 32-bit constant) into rHi:rLo. */
function times5Plus(hi: number, lo: number, n: number): void {
  mul(hi, lo, 0, 5);
  add(rHi, rLo, 0, n);
}

/**
 * Kafka's Murmur3.hash128(data) (seed 104729 unless given): 16 bytes, h1 then h2, each a big-endian int64, as
 * the foreign-key join's wrappers carry them.
 */
export function murmur3Hash128(data: Uint8Array, seed = MURMUR3_DEFAULT_SEED): Buffer {
  // Java widens the int seed to a long: a negative seed fills the high half with ones.
  h1Hi = seed < 0 ? 0xffffffff : 0;
  h1Lo = seed >>> 0;
  h2Hi = h1Hi;
  h2Lo = h1Lo;
  const length = data.length;
  const blocksEnd = length - (length % 16);
  for (let i = 0; i < blocksEnd; i += 16) {
    mixK1(word(data, i + 4, length), word(data, i, length));
    rotl(h1Hi, h1Lo, 27);
    add(rHi, rLo, h2Hi, h2Lo);
    times5Plus(rHi, rLo, N1);
    h1Hi = rHi;
    h1Lo = rLo;
    mixK2(word(data, i + 12, length), word(data, i + 8, length));
    rotl(h2Hi, h2Lo, 31);
    add(rHi, rLo, h1Hi, h1Lo);
    times5Plus(rHi, rLo, N2);
    h2Hi = rHi;
    h2Lo = rLo;
  }
  const tail = length - blocksEnd;
  if (tail > 8) mixK2(word(data, blocksEnd + 12, length), word(data, blocksEnd + 8, length));
  if (tail > 0) mixK1(word(data, blocksEnd + 4, length), word(data, blocksEnd, length));

  // Finalization: the length into both (a non-negative int: only the low half changes), then the cross sums.
  h1Lo = (h1Lo ^ length) >>> 0;
  h2Lo = (h2Lo ^ length) >>> 0;
  add(h1Hi, h1Lo, h2Hi, h2Lo);
  h1Hi = rHi;
  h1Lo = rLo;
  add(h2Hi, h2Lo, h1Hi, h1Lo);
  h2Hi = rHi;
  h2Lo = rLo;
  fmix(h1Hi, h1Lo);
  h1Hi = rHi;
  h1Lo = rLo;
  fmix(h2Hi, h2Lo);
  h2Hi = rHi;
  h2Lo = rLo;
  add(h1Hi, h1Lo, h2Hi, h2Lo);
  h1Hi = rHi;
  h1Lo = rLo;
  add(h2Hi, h2Lo, h1Hi, h1Lo);
  h2Hi = rHi;
  h2Lo = rLo;

  const out = Buffer.allocUnsafe(16);
  out.writeUInt32BE(h1Hi, 0);
  out.writeUInt32BE(h1Lo, 4);
  out.writeUInt32BE(h2Hi, 8);
  out.writeUInt32BE(h2Lo, 12);
  return out;
}
