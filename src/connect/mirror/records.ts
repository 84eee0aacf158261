// MirrorMaker's internal record formats, byte for byte as Kafka writes them with its protocol Struct layouts
// (big-endian; STRING is an int16 length then UTF-8), so Kafka's MirrorClient, RemoteClusterUtils and the
// OffsetSync/Checkpoint/Heartbeat formatters read what Brook writes and the other way round.
//   OffsetSync  key: topic STRING, partition INT32            value: upstreamOffset INT64, offset INT64
//   Checkpoint  key: group STRING, topic STRING, partition INT32
//               value: version INT16 (0), upstreamOffset INT64, offset INT64, metadata STRING
//   Heartbeat   key: sourceClusterAlias STRING, targetClusterAlias STRING
//               value: version INT16 (0), timestamp INT64

const INT16_MAX = 0x7fff;

export interface OffsetSync {
  topic: string;
  partition: number;
  upstreamOffset: number;
  downstreamOffset: number;
}

export interface Checkpoint {
  group: string;
  /** The remote (target cluster's) topic. */
  topic: string;
  partition: number;
  upstreamOffset: number;
  downstreamOffset: number;
  metadata: string;
}

export interface Heartbeat {
  sourceClusterAlias: string;
  targetClusterAlias: string;
  timestamp: number;
}

/** Writes fields in order; sizes are computed first so that each record is one exact allocation. */
class Writer {
  private readonly buf: Buffer;
  private at = 0;
  constructor(size: number) {
    this.buf = Buffer.alloc(size);
  }
  int16(v: number): this {
    this.at = this.buf.writeInt16BE(v, this.at);
    return this;
  }
  int32(v: number): this {
    this.at = this.buf.writeInt32BE(v, this.at);
    return this;
  }
  /** Two's complement in two 32-bit halves: no BigInt per field (an offset sync has two). */
  int64(v: number): this {
    if (!Number.isSafeInteger(v)) throw new RangeError(`${v} is not an integer a double holds exactly`);
    const high = Math.floor(v / 2 ** 32);
    this.buf.writeInt32BE(high, this.at);
    this.buf.writeUInt32BE(v - high * 2 ** 32, this.at + 4);
    this.at += 8;
    return this;
  }
  string(s: string): this {
    const n = Buffer.byteLength(s, 'utf8');
    this.int16(n);
    this.at += this.buf.write(s, this.at, 'utf8');
    return this;
  }
  done(): Buffer {
    if (this.at !== this.buf.length) throw new Error(`record encoded ${this.at} of ${this.buf.length} bytes`);
    return this.buf;
  }
}

function stringSize(s: string): number {
  const n = Buffer.byteLength(s, 'utf8');
  if (n > INT16_MAX) throw new RangeError(`string of ${n} bytes is longer than a Kafka STRING allows`);
  return 2 + n;
}

/** Reads fields in order, failing on truncated or malformed input rather than returning garbage. */
class Reader {
  private at = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}
  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new Error(`${this.what}: truncated at byte ${this.at}`);
  }
  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.at);
    this.at += 2;
    return v;
  }
  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  int64(): number {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.at);
    this.at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
      throw new Error(`${this.what}: offset ${v} beyond 2^53`);
    return Number(v);
  }
  string(): string {
    const n = this.int16();
    if (n < 0) throw new Error(`${this.what}: null STRING`);
    this.need(n);
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }
}

export function encodeOffsetSyncKey(s: Pick<OffsetSync, 'topic' | 'partition'>): Buffer {
  return new Writer(stringSize(s.topic) + 4).string(s.topic).int32(s.partition).done();
}

export function encodeOffsetSyncValue(s: Pick<OffsetSync, 'upstreamOffset' | 'downstreamOffset'>): Buffer {
  return new Writer(16).int64(s.upstreamOffset).int64(s.downstreamOffset).done();
}

export function decodeOffsetSync(key: Buffer, value: Buffer): OffsetSync {
  const k = new Reader(key, 'OffsetSync key');
  const v = new Reader(value, 'OffsetSync value');
  return { topic: k.string(), partition: k.int32(), upstreamOffset: v.int64(), downstreamOffset: v.int64() };
}

const CHECKPOINT_VERSION = 0;
const HEARTBEAT_VERSION = 0;

export function encodeCheckpointKey(c: Pick<Checkpoint, 'group' | 'topic' | 'partition'>): Buffer {
  return new Writer(stringSize(c.group) + stringSize(c.topic) + 4)
    .string(c.group)
    .string(c.topic)
    .int32(c.partition)
    .done();
}

export function encodeCheckpointValue(
  c: Pick<Checkpoint, 'upstreamOffset' | 'downstreamOffset' | 'metadata'>,
): Buffer {
  return new Writer(2 + 16 + stringSize(c.metadata))
    .int16(CHECKPOINT_VERSION)
    .int64(c.upstreamOffset)
    .int64(c.downstreamOffset)
    .string(c.metadata)
    .done();
}

export function decodeCheckpoint(key: Buffer, value: Buffer): Checkpoint {
  const k = new Reader(key, 'Checkpoint key');
  const v = new Reader(value, 'Checkpoint value');
  const group = k.string();
  const topic = k.string();
  const partition = k.int32();
  const version = v.int16();
  if (version !== CHECKPOINT_VERSION) throw new Error(`Checkpoint value: unknown version ${version}`);
  return {
    group,
    topic,
    partition,
    upstreamOffset: v.int64(),
    downstreamOffset: v.int64(),
    metadata: v.string(),
  };
}

export function encodeHeartbeatKey(h: Pick<Heartbeat, 'sourceClusterAlias' | 'targetClusterAlias'>): Buffer {
  return new Writer(stringSize(h.sourceClusterAlias) + stringSize(h.targetClusterAlias))
    .string(h.sourceClusterAlias)
    .string(h.targetClusterAlias)
    .done();
}

export function encodeHeartbeatValue(h: Pick<Heartbeat, 'timestamp'>): Buffer {
  return new Writer(10).int16(HEARTBEAT_VERSION).int64(h.timestamp).done();
}

export function decodeHeartbeat(key: Buffer, value: Buffer): Heartbeat {
  const k = new Reader(key, 'Heartbeat key');
  const v = new Reader(value, 'Heartbeat value');
  const sourceClusterAlias = k.string();
  const targetClusterAlias = k.string();
  const version = v.int16();
  if (version !== HEARTBEAT_VERSION) throw new Error(`Heartbeat value: unknown version ${version}`);
  return { sourceClusterAlias, targetClusterAlias, timestamp: v.int64() };
}
