// Writer: appends to a growing buffer. Large byte fields (record batches) can be attached by reference with
// `attach`, so an encoded response is a list of chunks that a socket writes with writev, without copying the
// batches into a new buffer.

const INITIAL_BYTES = 256;
/** Byte fields at least this large are attached by reference instead of copied. */
const ATTACH_BYTES_MIN = 4096;
const UUID_BYTES = 16;
const ZERO_UUID = Buffer.alloc(UUID_BYTES);

export class Writer {
  private buf: Buffer;
  private pos = 0;
  private readonly chunks: Buffer[] = [];
  private chunkStart = 0;
  private attachedBytes = 0;

  constructor(initialBytes = INITIAL_BYTES) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far, attached chunks included. */
  get length(): number {
    return this.attachedBytes + this.pos;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = Math.max(INITIAL_BYTES, this.buf.length * 2);
    while (size < this.pos + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, this.chunkStart, this.pos);
    this.pos -= this.chunkStart;
    this.chunkStart = 0;
    this.buf = next;
  }

  int8(v: number): this {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos++);
    return this;
  }

  uint8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }

  int16(v: number): this {
    this.ensure(2);
    this.pos = this.buf.writeInt16BE(v, this.pos);
    return this;
  }

  uint16(v: number): this {
    this.ensure(2);
    this.pos = this.buf.writeUInt16BE(v, this.pos);
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeInt32BE(v, this.pos);
    return this;
  }

  uint32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeUInt32BE(v, this.pos);
    return this;
  }

  int64(v: bigint): this {
    this.ensure(8);
    this.pos = this.buf.writeBigInt64BE(v, this.pos);
    return this;
  }

  float64(v: number): this {
    this.ensure(8);
    this.pos = this.buf.writeDoubleBE(v, this.pos);
    return this;
  }

  /** Accepts Kafka's text form (22 characters of unpadded base64url). */
  uuid(v: string): this {
    const bytes = v === '' ? ZERO_UUID : Buffer.from(v, 'base64url');
    if (bytes.length !== UUID_BYTES) throw new RangeError(`not a UUID: ${v}`);
    return this.raw(bytes);
  }

  uvarint(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`uvarint out of range: ${v}`);
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
    return this;
  }

  varint(v: number): this {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff)
      throw new RangeError(`varint out of range: ${v}`);
    return this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  varlong(v: bigint): this {
    let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
    this.ensure(10);
    while (u >= 0x80n) {
      this.buf[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
    return this;
  }

  /** Copies bytes in, or attaches large ones by reference. */
  raw(bytes: Buffer | Uint8Array): this {
    if (bytes.length >= ATTACH_BYTES_MIN) {
      return this.attach(
        Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
      );
    }
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
    return this;
  }

  /** Appends a buffer by reference: the caller must not change it until the output has been written. */
  attach(bytes: Buffer): this {
    if (this.pos > this.chunkStart) this.chunks.push(this.buf.subarray(this.chunkStart, this.pos));
    this.chunks.push(bytes);
    this.attachedBytes += this.pos - this.chunkStart + bytes.length;
    // Later writes go into a fresh region so that the chunk already pushed is never overwritten.
    this.buf = this.buf.subarray(this.pos);
    this.pos = 0;
    this.chunkStart = 0;
    return this;
  }

  string(v: string): this {
    const length = Buffer.byteLength(v);
    if (length > 0x7fff) throw new RangeError(`string of ${length} bytes is too long`);
    this.int16(length);
    return this.utf8(v, length);
  }

  nullableString(v: string | null): this {
    return v === null ? this.int16(-1) : this.string(v);
  }

  compactString(v: string): this {
    const length = Buffer.byteLength(v);
    this.uvarint(length + 1);
    return this.utf8(v, length);
  }

  compactNullableString(v: string | null): this {
    return v === null ? this.uvarint(0) : this.compactString(v);
  }

  private utf8(v: string, length: number): this {
    this.ensure(length);
    this.pos += this.buf.write(v, this.pos, length, 'utf8');
    return this;
  }

  bytes(v: Buffer | Uint8Array): this {
    this.int32(v.length);
    return this.raw(v);
  }

  nullableBytes(v: Buffer | Uint8Array | null): this {
    return v === null ? this.int32(-1) : this.bytes(v);
  }

  compactBytes(v: Buffer | Uint8Array): this {
    this.uvarint(v.length + 1);
    return this.raw(v);
  }

  compactNullableBytes(v: Buffer | Uint8Array | null): this {
    return v === null ? this.uvarint(0) : this.compactBytes(v);
  }

  arrayCount(count: number): this {
    return this.int32(count);
  }

  nullableArrayCount(count: number | null): this {
    return this.int32(count === null ? -1 : count);
  }

  compactArrayCount(count: number): this {
    return this.uvarint(count + 1);
  }

  compactNullableArrayCount(count: number | null): this {
    return this.uvarint(count === null ? 0 : count + 1);
  }

  /** Overwrites an int32 written earlier at an absolute position of the current chunk (length prefixes). */
  patchInt32(position: number, v: number): void {
    this.buf.writeInt32BE(v, position);
  }

  /** Position within the current chunk, for patchInt32; valid until the next attach. */
  get chunkPosition(): number {
    return this.pos;
  }

  /** The output as chunks, for writev. */
  chunksOut(): Buffer[] {
    const out = this.chunks.slice();
    if (this.pos > this.chunkStart) out.push(this.buf.subarray(this.chunkStart, this.pos));
    return out;
  }

  /** The output as one buffer (copies only when something was attached). */
  toBuffer(): Buffer {
    if (this.chunks.length === 0) return this.buf.subarray(this.chunkStart, this.pos);
    return Buffer.concat(this.chunksOut(), this.length);
  }
}
