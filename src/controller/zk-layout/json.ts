// Validated reading of the JSON that Kafka keeps in its znodes, and the one way this module writes JSON.
//
// Every decoder in zk-layout answers a Decoded<T>: either the value, or a LayoutDecodeError saying which znode
// kind and which field was wrong. Data in ZooKeeper may have been written by any Kafka version, by an operator
// with zookeeper-shell, or be damaged; none of that may crash the controller. Inside a decoder, the readers
// below throw LayoutDecodeError and decodeJson turns it into a value at the boundary; any other exception is
// a bug and passes through.

/** The error value of a decoder: `znode` names the kind of node ("partition state"), `message` the problem. */
export class LayoutDecodeError extends Error {
  override name = 'LayoutDecodeError';
  constructor(
    readonly znode: string,
    readonly reason: string,
  ) {
    super(`bad ${znode}: ${reason}`);
  }
}

export type Decoded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: LayoutDecodeError };

const INT32_MAX = 0x7fffffff;
const INT32_MIN = -0x80000000;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function encodeJson(value: object): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Parses bytes as a JSON object and reads it with `read`; any problem becomes a LayoutDecodeError value. */
export function decodeJson<T>(znode: string, bytes: Uint8Array, read: (json: JsonObject) => T): Decoded<T> {
  return decodeText(znode, bytes, (text) => {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new LayoutDecodeError(znode, `not JSON (${(e as Error).message})`);
    }
    if (!isPlainObject(raw)) throw new LayoutDecodeError(znode, 'not a JSON object');
    return read(new JsonObject(znode, '', raw));
  });
}

/** Decodes bytes as UTF-8 text and reads it with `read`, for the few znodes that hold plain text. */
export function decodeText<T>(znode: string, bytes: Uint8Array, read: (text: string) => T): Decoded<T> {
  try {
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      throw new LayoutDecodeError(znode, 'not UTF-8');
    }
    return { ok: true, value: read(text) };
  } catch (e) {
    if (e instanceof LayoutDecodeError) return { ok: false, error: e };
    throw e;
  }
}

/** A decimal integer as Kafka writes longs in strings ("1690000000000"), checked to be a safe integer. */
export function parseIntegerText(znode: string, field: string, text: string): number {
  if (!/^-?\d{1,19}$/.test(text.trim()))
    throw new LayoutDecodeError(znode, `${field} is not an integer: ${text}`);
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n)) throw new LayoutDecodeError(znode, `${field} is out of range: ${text}`);
  return n;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface IntRange {
  readonly min?: number;
  readonly max?: number;
}

/** One JSON object inside a znode, with typed field readers that throw LayoutDecodeError. */
export class JsonObject {
  constructor(
    private readonly znode: string,
    private readonly where: string,
    private readonly raw: Record<string, unknown>,
  ) {}

  has(key: string): boolean {
    return Object.hasOwn(this.raw, key) && this.raw[key] !== undefined;
  }

  keys(): string[] {
    return Object.keys(this.raw);
  }

  fail(key: string, problem: string): never {
    throw new LayoutDecodeError(this.znode, `${this.where}${key} ${problem}`);
  }

  private value(key: string): unknown {
    if (!this.has(key)) this.fail(key, 'is missing');
    return this.raw[key];
  }

  /** A JSON number that is an integer within range (int32 unless told otherwise). */
  int(key: string, range: IntRange = {}): number {
    return this.checkInt(key, this.value(key), range);
  }

  intOr(key: string, fallback: number, range: IntRange = {}): number {
    return this.has(key) && this.raw[key] !== null ? this.int(key, range) : fallback;
  }

  string(key: string): string {
    const v = this.value(key);
    if (typeof v !== 'string') this.fail(key, 'is not a string');
    return v;
  }

  /** A string that may be absent or null. */
  nullableString(key: string): string | null {
    if (!this.has(key) || this.raw[key] === null) return null;
    return this.string(key);
  }

  /** A long written as a decimal string, as Kafka writes timestamps and producer ids. */
  integerString(key: string): number {
    return parseIntegerText(this.znode, `${this.where}${key}`, this.string(key));
  }

  intArray(key: string, range: IntRange = {}): number[] {
    const v = this.value(key);
    if (!Array.isArray(v)) this.fail(key, 'is not an array');
    return v.map((item, i) => this.checkInt(`${key}[${i}]`, item, range));
  }

  stringArray(key: string): string[] {
    const v = this.value(key);
    if (!Array.isArray(v) || v.some((item) => typeof item !== 'string'))
      this.fail(key, 'is not an array of strings');
    return v as string[];
  }

  object(key: string): JsonObject {
    const v = this.value(key);
    if (!isPlainObject(v)) this.fail(key, 'is not an object');
    return new JsonObject(this.znode, `${this.where}${key}.`, v);
  }

  /** An object that may be absent or null (then empty). */
  objectOrEmpty(key: string): JsonObject {
    return this.has(key) && this.raw[key] !== null ? this.object(key) : new JsonObject(this.znode, '', {});
  }

  objectArray(key: string): JsonObject[] {
    const v = this.value(key);
    if (!Array.isArray(v)) this.fail(key, 'is not an array');
    return v.map((item, i) => {
      if (!isPlainObject(item)) this.fail(`${key}[${i}]`, 'is not an object');
      return new JsonObject(this.znode, `${this.where}${key}[${i}].`, item);
    });
  }

  /** An object whose values are all strings (configs, listener maps). */
  stringMap(key: string): Record<string, string> {
    const o = this.object(key);
    const out: Record<string, string> = {};
    for (const k of o.keys()) out[k] = o.string(k);
    return out;
  }

  /** The "version" field, which must be one of the versions this decoder knows. */
  version(known: readonly number[]): number {
    const raw = this.value('version');
    // The cluster id znode writes its version as the string "1".
    const v = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
    if (typeof v !== 'number' || !known.includes(v))
      this.fail('version', `${JSON.stringify(raw)} is not one of ${known.join(', ')}`);
    return v;
  }

  private checkInt(key: string, v: unknown, range: IntRange): number {
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(key, 'is not an integer');
    const min = range.min ?? INT32_MIN;
    const max = range.max ?? INT32_MAX;
    if (v < min || v > max) this.fail(key, `${v} is outside [${min}, ${max}]`);
    return v;
  }
}
