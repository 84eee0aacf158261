// The two places where Kafka Streams' user data bytes differ from Kafka's protocol primitives
// (src/protocol/primitives): a UUID in SubscriptionInfo is Java's java.util.UUID (16 bytes, shown as hex with
// dashes, where Kafka's own Uuid is shown as base64url), and AssignmentInfo's strings are Java's
// DataOutput.writeUTF (uint16 length, then modified UTF-8). Everything else is read and written with the
// primitives' Reader and Writer.

import { DecodeError, type Reader, type Writer } from '../../protocol/primitives/index.js';

const UUID_BYTES = 16;
const JAVA_UUID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i;
/** writeUTF's length is an unsigned short. */
const UTF_BYTES_MAX = 0xffff;

/** True for a UUID's text as Java writes it (8-4-4-4-12 hex digits). */
export function isJavaUuid(text: string): boolean {
  return JAVA_UUID.test(text);
}

/** Writes a java.util.UUID given as hex with dashes: its 16 bytes, most significant first. */
export function writeJavaUuid(w: Writer, text: string): void {
  const m = JAVA_UUID.exec(text);
  if (m === null) throw new Error(`${text} is not a UUID`);
  w.raw(Buffer.from(m.slice(1).join(''), 'hex'));
}

/** Reads a java.util.UUID as Java prints it: lower-case hex with dashes. */
export function readJavaUuid(r: Reader): string {
  const hex = r.raw(UUID_BYTES).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Java's modified UTF-8 (DataOutput.writeUTF): per UTF-16 unit, 1 byte for 1-127, 2 for 0 and up to 0x7ff, else 3. */
function modifiedUtf8(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 1 && c <= 0x7f) out.push(c);
    else if (c <= 0x7ff) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  if (out.length > UTF_BYTES_MAX)
    throw new RangeError(`string of ${out.length} bytes is too long for writeUTF`);
  return Buffer.from(out);
}

function fromModifiedUtf8(b: Buffer): string {
  const units: number[] = [];
  for (let i = 0; i < b.length; ) {
    const x = b[i]!;
    if (x < 0x80) {
      units.push(x);
      i += 1;
    } else if ((x & 0xe0) === 0xc0 && i + 1 < b.length) {
      units.push(((x & 0x1f) << 6) | (b[i + 1]! & 0x3f));
      i += 2;
    } else if ((x & 0xf0) === 0xe0 && i + 2 < b.length) {
      units.push(((x & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f));
      i += 3;
    } else throw new DecodeError('bad-value', 'malformed modified UTF-8', i);
  }
  return String.fromCharCode(...units);
}

/** DataOutput.writeUTF: uint16 length, then the string in modified UTF-8. */
export function writeUtf(w: Writer, s: string): void {
  const b = modifiedUtf8(s);
  w.uint16(b.length);
  w.raw(b);
}

/** DataInput.readUTF. */
export function readUtf(r: Reader): string {
  return fromModifiedUtf8(r.raw(r.uint16()));
}
