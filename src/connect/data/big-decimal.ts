// An exact decimal number (Java's BigDecimal): an unscaled integer and a scale, value = unscaled * 10^-scale.
// The value type of the Decimal logical type; JavaScript numbers cannot hold NUMERIC(38, 10) exactly.

import { DataException } from '../errors.js';

export class BigDecimal {
  constructor(
    readonly unscaled: bigint,
    readonly scale: number,
  ) {}

  /** Parses "12.340", "-0.5", "1e3" (exponents are folded into the scale). */
  static parse(text: string): BigDecimal {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
    if (m === null || (m[2] === '' && (m[3] ?? '') === ''))
      throw new DataException(`Not a decimal number: ${text}`);
    const fraction = m[3] ?? '';
    const digits = `${m[2]}${fraction}` || '0';
    let scale = fraction.length - Number(m[4] ?? 0);
    let unscaled = BigInt(digits);
    if (scale < 0) {
      unscaled *= 10n ** BigInt(-scale);
      scale = 0;
    }
    return new BigDecimal(m[1] === '-' ? -unscaled : unscaled, scale);
  }

  static fromNumber(n: number): BigDecimal {
    if (!Number.isFinite(n)) throw new DataException(`Not a finite number: ${n}`);
    return BigDecimal.parse(String(n));
  }

  /** The same value at another scale; rounding half up when digits are dropped. */
  setScale(scale: number): BigDecimal {
    if (scale === this.scale) return this;
    if (scale > this.scale) return new BigDecimal(this.unscaled * 10n ** BigInt(scale - this.scale), scale);
    const divisor = 10n ** BigInt(this.scale - scale);
    const negative = this.unscaled < 0n;
    const abs = negative ? -this.unscaled : this.unscaled;
    let q = abs / divisor;
    if ((abs % divisor) * 2n >= divisor) q += 1n;
    return new BigDecimal(negative ? -q : q, scale);
  }

  toNumber(): number {
    return Number(this.toString());
  }

  equals(other: BigDecimal): boolean {
    return this.unscaled === other.unscaled && this.scale === other.scale;
  }

  toString(): string {
    if (this.scale <= 0) return (this.unscaled * 10n ** BigInt(-this.scale)).toString();
    const negative = this.unscaled < 0n;
    const digits = (negative ? -this.unscaled : this.unscaled).toString().padStart(this.scale + 1, '0');
    const cut = digits.length - this.scale;
    return `${negative ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** Big-endian two's complement bytes of an integer, in as few bytes as hold it (Java's BigInteger.toByteArray). */
export function bigintToTwosComplement(value: bigint): Buffer {
  let hex = (value < 0n ? -value : value).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (value >= 0n) {
    return bytes.length === 0 || (bytes[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.alloc(1), bytes]) : bytes;
  }
  // Negative: two's complement of the magnitude, one byte wider when the top bit would read as positive.
  const width = bytes.length;
  let mod = (1n << BigInt(width * 8)) + value;
  if (mod < 0n || (width > 0 && mod < 1n << BigInt(width * 8 - 1)))
    mod = (1n << BigInt((width + 1) * 8)) + value;
  hex = mod.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  bytes = Buffer.from(hex, 'hex');
  // Strip redundant leading 0xff bytes (keep one sign byte).
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0xff && (bytes[start + 1]! & 0x80) !== 0) start++;
  return bytes.subarray(start);
}

export function twosComplementToBigint(bytes: Buffer): bigint {
  if (bytes.length === 0) return 0n;
  const unsigned = BigInt(`0x${bytes.toString('hex')}`);
  return (bytes[0]! & 0x80) === 0 ? unsigned : unsigned - (1n << BigInt(bytes.length * 8));
}
