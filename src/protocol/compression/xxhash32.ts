// xxHash32, the checksum of the LZ4 frame format. Brook needs it only to read and write the frame descriptor
// checksum (HC) itself, because Kafka's message format v0 carries a deliberately "broken" HC that the lz4
// library would reject (see lz4.ts). The inputs are a few bytes, so clarity matters more than speed here.

const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function round(acc: number, lane: number): number {
  return Math.imul(rotl((acc + Math.imul(lane, PRIME2)) | 0, 13), PRIME1);
}

/** xxHash32 of buf[start, end) with the given seed, as an unsigned 32-bit number. */
export function xxhash32(buf: Uint8Array, start = 0, end = buf.length, seed = 0): number {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = start;
  let h: number;
  if (end - start >= 16) {
    let v1 = (seed + PRIME1 + PRIME2) | 0;
    let v2 = (seed + PRIME2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - PRIME1) | 0;
    while (pos + 16 <= end) {
      v1 = round(v1, view.getUint32(pos, true));
      v2 = round(v2, view.getUint32(pos + 4, true));
      v3 = round(v3, view.getUint32(pos + 8, true));
      v4 = round(v4, view.getUint32(pos + 12, true));
      pos += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + PRIME5) | 0;
  }
  h = (h + (end - start)) | 0;
  while (pos + 4 <= end) {
    h = Math.imul(rotl((h + Math.imul(view.getUint32(pos, true), PRIME3)) | 0, 17), PRIME4);
    pos += 4;
  }
  while (pos < end) {
    h = Math.imul(rotl((h + Math.imul(buf[pos]!, PRIME5)) | 0, 11), PRIME1);
    pos++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, PRIME2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME3);
  h ^= h >>> 16;
  return h >>> 0;
}
