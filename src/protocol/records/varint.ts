// Zigzag varints over (buffer, position) pairs, for the record codec. The general Reader in protocol/primitives
// returns varlongs as bigint; records need them as numbers (timestamp deltas) and read millions of them per
// second, so these return numbers and refuse values beyond Number.MAX_SAFE_INTEGER as malformed, which no real
// timestamp delta reaches. Readers throw DecodeError; `end` is exclusive and always checked.

import { DecodeError } from '../primitives/decode-error.js';

/** Position after the last varint read; a module-level slot avoids allocating a result pair per read. */
export let varintEnd = 0;

function truncated(pos: number): DecodeError {
  return new DecodeError('truncated', 'varint runs past the end of the record', pos);
}

/** Reads a zigzag varint (32-bit) at pos; the next position is left in `varintEnd`. */
export function readVarint(buf: Uint8Array, pos: number, end: number): number {
  // Most varints in a record fit in one byte (offset deltas, key lengths, header counts) or two (record and
  // value lengths up to 8 KiB); decoding both inline makes walking a produced batch about a fifth faster than
  // one byte inline and the loop for the rest (bench/README.md, "Record varints: two bytes inline").
  if (pos + 1 < end) {
    const b0 = buf[pos]!;
    if (b0 < 0x80) {
      varintEnd = pos + 1;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
    const b1 = buf[pos + 1]!;
    if (b1 < 0x80) {
      const u = (b0 & 0x7f) | (b1 << 7);
      varintEnd = pos + 2;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  return readVarintLong(buf, pos, end);
}

function readVarintLong(buf: Uint8Array, pos: number, end: number): number {
  const start = pos;
  let u = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= end) throw truncated(start);
    const byte = buf[pos++]!;
    if (shift === 28 && byte > 0x0f) throw new DecodeError('bad-varint', 'varint exceeds 32 bits', start);
    // Bit operations keep this in int32; the fifth byte lands in bits 28-31 and `>>> 1` reads them unsigned.
    u |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      varintEnd = pos;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  throw new DecodeError('bad-varint', 'varint longer than 5 bytes', start);
}

/** Reads a zigzag varlong at pos as a number; the next position is left in `varintEnd`. */
export function readVarlong(buf: Uint8Array, pos: number, end: number): number {
  if (pos < end) {
    const b0 = buf[pos]!;
    if (b0 < 0x80) {
      varintEnd = pos + 1;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
  }
  return readVarlongLong(buf, pos, end);
}

function readVarlongLong(buf: Uint8Array, pos: number, end: number): number {
  const start = pos;
  let u = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    if (pos >= end) throw truncated(start);
    const byte = buf[pos++]!;
    // Beyond 32 bits, integer bit operations would wrap; multiplication stays exact up to 2^53.
    u += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) {
      if (u > Number.MAX_SAFE_INTEGER) {
        throw new DecodeError('bad-value', 'varlong beyond the safe integer range', start);
      }
      varintEnd = pos;
      return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    }
  }
  throw new DecodeError('bad-varint', 'varlong longer than 10 bytes', start);
}

function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

export function varintSize(v: number): number {
  let u = zigzag(v);
  let size = 1;
  while (u >= 0x80) {
    u = Math.floor(u / 128);
    size++;
  }
  return size;
}

export const varlongSize = varintSize;

/** Writes a zigzag varint or varlong (any safe integer); returns the next position. */
export function writeVarint(buf: Uint8Array, pos: number, v: number): number {
  let u = zigzag(v);
  while (u >= 0x80) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

export const writeVarlong = writeVarint;
