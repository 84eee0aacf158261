// Independent, bit-at-a-time CRC implementations used as test oracles for the table-driven native ones.
// They are checked against the standard check values of "123456789" before any test trusts them.

function reflectedCrc32(polynomial: number, bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ polynomial : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** CRC-32C (Castagnoli), reflected polynomial 0x82F63B78. */
export function crc32cOracle(bytes: Uint8Array): number {
  return reflectedCrc32(0x82f63b78, bytes);
}

/** CRC-32 (IEEE 802.3), reflected polynomial 0xEDB88320. */
export function crc32Oracle(bytes: Uint8Array): number {
  return reflectedCrc32(0xedb88320, bytes);
}

/** Big-endian byte writer for spelling out expected bytes field by field. */
export class Bytes {
  private readonly parts: number[] = [];
  int8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  int16(v: number): this {
    return this.int8(v >> 8).int8(v);
  }
  int32(v: number): this {
    return this.int16(v >> 16).int16(v);
  }
  int64(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    return this.raw(b);
  }
  raw(bytes: Uint8Array | string | readonly number[]): this {
    for (const b of typeof bytes === 'string' ? Buffer.from(bytes) : bytes) this.parts.push(b);
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  toBuffer(): Buffer {
    return Buffer.from(this.parts);
  }
}
