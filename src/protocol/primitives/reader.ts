// Reader: a cursor over one frame. Every read checks bounds first, so a hostile length or count can never make
// it read past the frame or allocate more than the frame holds. Byte fields are returned as views (subarray),
// not copies: the broker moves record batches as bytes.

import { DecodeError } from './decode-error.js';

const UUID_BYTES = 16;
/** Elements that may take zero bytes (empty structs) cannot be bounded by the input; this caps them instead. */
const ZERO_BYTE_ELEMENTS_MAX = 1 << 16;

export class Reader {
  pos: number;
  readonly end: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(bytes: number): void {
    if (this.end - this.pos < bytes) {
      throw new DecodeError('truncated', `need ${bytes} bytes, have ${this.end - this.pos}`, this.pos);
    }
  }

  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }

  uint8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  bool(): boolean {
    return this.int8() !== 0;
  }

  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Kafka's UUID as its usual text form: 22 characters of unpadded base64url. */
  uuid(): string {
    this.need(UUID_BYTES);
    const v = this.buf.toString('base64url', this.pos, this.pos + UUID_BYTES);
    this.pos += UUID_BYTES;
    return v;
  }

  /** Unsigned LEB128 varint of at most 32 bits (5 bytes). */
  uvarint(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      this.need(1);
      const byte = this.buf[this.pos++]!;
      if (i === 4 && byte > 0x0f)
        throw new DecodeError('bad-varint', 'unsigned varint exceeds 32 bits', this.pos - 1);
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
    throw new DecodeError('bad-varint', 'unsigned varint longer than 5 bytes', this.pos);
  }

  /** Zigzag-encoded signed varint of at most 32 bits. */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /** Zigzag-encoded signed varlong of at most 64 bits (10 bytes). */
  varlong(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      this.need(1);
      const byte = this.buf[this.pos++]!;
      if (i === 9 && byte > 0x01)
        throw new DecodeError('bad-varint', 'varlong exceeds 64 bits', this.pos - 1);
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return (result >> 1n) ^ -(result & 1n);
      shift += 7n;
    }
    throw new DecodeError('bad-varint', 'varlong longer than 10 bytes', this.pos);
  }

  /** A length that must fit in what is left of the input. */
  private checkedLength(length: number, start: number): number {
    if (length < 0) throw new DecodeError('negative-length', `negative length ${length}`, start);
    if (length > this.end - this.pos) {
      throw new DecodeError(
        'length-exceeds-input',
        `length ${length} exceeds remaining ${this.remaining}`,
        start,
      );
    }
    return length;
  }

  private text(length: number, start: number): string {
    this.checkedLength(length, start);
    const v = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return v;
  }

  private view(length: number, start: number): Buffer {
    this.checkedLength(length, start);
    const v = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return v;
  }

  string(): string {
    const start = this.pos;
    return this.text(this.int16(), start);
  }

  nullableString(): string | null {
    const start = this.pos;
    const length = this.int16();
    return length === -1 ? null : this.text(length, start);
  }

  compactString(): string {
    const start = this.pos;
    const length = this.uvarint() - 1;
    if (length < 0) throw new DecodeError('bad-value', 'null compact string where non-nullable', start);
    return this.text(length, start);
  }

  compactNullableString(): string | null {
    const start = this.pos;
    const length = this.uvarint() - 1;
    return length === -1 ? null : this.text(length, start);
  }

  bytes(): Buffer {
    const start = this.pos;
    return this.view(this.int32(), start);
  }

  nullableBytes(): Buffer | null {
    const start = this.pos;
    const length = this.int32();
    return length === -1 ? null : this.view(length, start);
  }

  compactBytes(): Buffer {
    const start = this.pos;
    const length = this.uvarint() - 1;
    if (length < 0) throw new DecodeError('bad-value', 'null compact bytes where non-nullable', start);
    return this.view(length, start);
  }

  compactNullableBytes(): Buffer | null {
    const start = this.pos;
    const length = this.uvarint() - 1;
    return length === -1 ? null : this.view(length, start);
  }

  /** Raw bytes of a known length (record bodies, tagged field payloads). */
  raw(length: number): Buffer {
    return this.view(length, this.pos);
  }

  /**
   * Array element count. An element takes at least `minElementBytes` on the wire, so a count that could not fit
   * in the remaining input is rejected before anything is allocated.
   */
  private checkedCount(count: number, start: number, minElementBytes: number): number {
    if (count < 0) throw new DecodeError('negative-length', `negative array count ${count}`, start);
    const bound =
      minElementBytes > 0 ? Math.floor((this.end - this.pos) / minElementBytes) : ZERO_BYTE_ELEMENTS_MAX;
    if (count > bound) {
      throw new DecodeError('length-exceeds-input', `array count ${count} exceeds remaining input`, start);
    }
    return count;
  }

  arrayCount(minElementBytes = 1): number {
    const start = this.pos;
    return this.checkedCount(this.int32(), start, minElementBytes);
  }

  /** Returns -1 for a null array. */
  nullableArrayCount(minElementBytes = 1): number {
    const start = this.pos;
    const count = this.int32();
    return count === -1 ? -1 : this.checkedCount(count, start, minElementBytes);
  }

  compactArrayCount(minElementBytes = 1): number {
    const start = this.pos;
    const count = this.uvarint() - 1;
    if (count < 0) throw new DecodeError('bad-value', 'null compact array where non-nullable', start);
    return this.checkedCount(count, start, minElementBytes);
  }

  /** Returns -1 for a null array. */
  compactNullableArrayCount(minElementBytes = 1): number {
    const start = this.pos;
    const count = this.uvarint() - 1;
    return count === -1 ? -1 : this.checkedCount(count, start, minElementBytes);
  }

  /** Fails when a decoder finished with bytes left over, which means the frame and the schema disagree. */
  expectEnd(): void {
    if (this.pos !== this.end) {
      throw new DecodeError('trailing-bytes', `${this.end - this.pos} bytes left after decoding`, this.pos);
    }
  }
}
