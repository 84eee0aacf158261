// Kafka Streams' AssignmentInfo bytes (the user data of a "stream" assignment), as Kafka's AssignmentInfo.encode
// writes them with a DataOutputStream: big-endian ints, strings as Java's writeUTF (uint16 length, modified UTF-8).
// Brook writes and reads versions 7 to 11 (11 unless version probing chose an older one), which share one layout:
//   int32 version, int32 commonlySupportedVersion,
//   active tasks: int32 count, then one task id per assigned partition, in the order of the member's partitions
//     sorted by topic then partition (the receiver pairs them up by position); a task id is int32 subtopology,
//     int32 partition and, from version 10, the named topology's length (0: none; Brook has no named topologies),
//   standby tasks: int32 count, each a task id and its partitions (int32 count, each writeUTF topic, int32 partition),
//   a topic dictionary: int32 count, each int32 index and writeUTF topic,
//   partitionsByHost then standbyPartitionsByHost: int32 hosts, each writeUTF host, int32 port, int32 count and
//     per partition int32 topic index, int32 partition,
//   int32 errCode, int64 nextRebalanceMs (Long.MAX_VALUE: no probing rebalance is due).

import type { TopicPartition } from '../../client/requests.js';
import type { AssignmentInfo } from './streams-assignor.js';

export const ASSIGNMENT_INFO_VERSION = 11;
/** The oldest version written and read: the layout shared by 7 to 11. */
const MIN_WRITTEN_VERSION = 7;
const MIN_NAMED_TOPOLOGY_VERSION = 10;
const LONG_MAX = 9223372036854775807n;

/** Java's modified UTF-8 (DataOutput.writeUTF): per UTF-16 unit, 1 byte for 1-127, 2 for 0 and up to 0x7ff, else 3. */
function modifiedUtf8(s: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 1 && c <= 0x7f) out.push(c);
    else if (c <= 0x7ff) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  if (out.length > 0xffff) throw new RangeError(`string of ${out.length} bytes is too long for writeUTF`);
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
    } else throw new RangeError('AssignmentInfo: malformed modified UTF-8');
  }
  return String.fromCharCode(...units);
}

class Out {
  private readonly parts: Buffer[] = [];

  int(n: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(n);
    this.parts.push(b);
  }

  long(n: bigint): void {
    const b = Buffer.allocUnsafe(8);
    b.writeBigInt64BE(n);
    this.parts.push(b);
  }

  utf(s: string): void {
    const b = modifiedUtf8(s);
    const n = Buffer.allocUnsafe(2);
    n.writeUInt16BE(b.length);
    this.parts.push(n, b);
  }

  task(id: string, version: number): void {
    const [st, p] = id.split('_').map(Number) as [number, number];
    this.int(st);
    this.int(p);
    if (version >= MIN_NAMED_TOPOLOGY_VERSION) this.int(0); // no named topology
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class In {
  private at = 0;

  constructor(private readonly b: Buffer) {}

  private need(n: number): number {
    if (this.at + n > this.b.length) throw new RangeError(`AssignmentInfo truncated at byte ${this.at}`);
    const at = this.at;
    this.at += n;
    return at;
  }

  int(): number {
    return this.b.readInt32BE(this.need(4));
  }

  long(): bigint {
    return this.b.readBigInt64BE(this.need(8));
  }

  count(): number {
    const n = this.int();
    if (n < 0 || n > this.b.length) throw new RangeError(`AssignmentInfo: bad count ${n}`);
    return n;
  }

  utf(): string {
    const n = this.b.readUInt16BE(this.need(2));
    const at = this.need(n);
    return fromModifiedUtf8(this.b.subarray(at, at + n));
  }

  task(version: number): string | null {
    const st = this.int();
    const p = this.int();
    // A named topology's name (int32 length, then UTF-16 chars): Brook has none, so such a task is not Brook's.
    if (version >= MIN_NAMED_TOPOLOGY_VERSION && this.int() !== 0) return null;
    return `${st}_${p}`;
  }

  get remaining(): number {
    return this.b.length - this.at;
  }
}

const byTopicThenPartition = (a: TopicPartition, b: TopicPartition): number =>
  a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;

function splitHost(hostPort: string): [string, number] {
  const at = hostPort.lastIndexOf(':');
  const port = Number(hostPort.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port))
    throw new RangeError(`application.server ${hostPort} is not host:port`);
  return [hostPort.slice(0, at), port];
}

/**
 * The bytes of a member's assignment in `info.version` (7 to 11; 11 when absent) with
 * `info.commonlySupportedVersion` (the group's lowest latest supported version; the version when absent).
 * `partitionsOf` gives a task's partitions: the active list holds one task id per assigned partition (in topic,
 * partition order), the standby list each task with its partitions.
 */
export function encodeAssignmentInfo(
  info: AssignmentInfo,
  partitionsOf: (task: string) => TopicPartition[],
): Buffer {
  const version = info.version >= MIN_WRITTEN_VERSION ? info.version : ASSIGNMENT_INFO_VERSION;
  if (version > ASSIGNMENT_INFO_VERSION) throw new Error(`AssignmentInfo version ${version} is not written`);
  const o = new Out();
  o.int(version);
  o.int(info.commonlySupportedVersion ?? version);
  const owned = info.activeTasks.flatMap((task) => partitionsOf(task).map((tp) => ({ tp, task })));
  owned.sort((a, b) => byTopicThenPartition(a.tp, b.tp));
  o.int(owned.length);
  for (const { task } of owned) o.task(task, version);
  o.int(info.standbyTasks.length);
  for (const task of info.standbyTasks) {
    o.task(task, version);
    const tps = partitionsOf(task);
    o.int(tps.length);
    for (const tp of tps) {
      o.utf(tp.topic);
      o.int(tp.partition);
    }
  }
  const hosts = [info.partitionsByHost, info.standbyPartitionsByHost];
  const topics: string[] = [];
  for (const byHost of hosts)
    for (const pairs of Object.values(byHost))
      for (const [t] of pairs) if (!topics.includes(t)) topics.push(t);
  o.int(topics.length);
  for (const [i, t] of topics.entries()) {
    o.int(i);
    o.utf(t);
  }
  for (const byHost of hosts) {
    const entries = Object.entries(byHost);
    o.int(entries.length);
    for (const [hostPort, pairs] of entries) {
      const [host, port] = splitHost(hostPort);
      o.utf(host);
      o.int(port);
      o.int(pairs.length);
      for (const [t, p] of pairs) {
        o.int(topics.indexOf(t));
        o.int(p);
      }
    }
  }
  o.int(info.errCode);
  o.long(
    info.nextRebalanceMs !== undefined && info.nextRebalanceMs > 0 ? BigInt(info.nextRebalanceMs) : LONG_MAX,
  );
  return o.done();
}

/**
 * An AssignmentInfo of versions 7 to `latestSupported` (11 unless this instance plays an older one), or null
 * for anything else (or tasks of named topologies).
 */
export function decodeAssignmentInfoBytes(
  bytes: Buffer,
  latestSupported = ASSIGNMENT_INFO_VERSION,
): AssignmentInfo | null {
  try {
    const r = new In(bytes);
    const version = r.int();
    if (version < MIN_WRITTEN_VERSION || version > latestSupported) return null;
    const commonlySupportedVersion = r.int();
    const activeTasks: string[] = [];
    for (let i = 0, n = r.count(); i < n; i++) {
      const t = r.task(version);
      if (t === null) return null;
      if (!activeTasks.includes(t)) activeTasks.push(t);
    }
    const standbyTasks: string[] = [];
    for (let i = 0, n = r.count(); i < n; i++) {
      const t = r.task(version);
      if (t === null) return null;
      standbyTasks.push(t);
      for (let j = 0, m = r.count(); j < m; j++) {
        r.utf();
        r.int();
      }
    }
    const topics = new Map<number, string>();
    for (let i = 0, n = r.count(); i < n; i++) {
      const index = r.int();
      topics.set(index, r.utf());
    }
    const byHost = (): Record<string, [string, number][]> => {
      const out: Record<string, [string, number][]> = {};
      for (let i = 0, n = r.count(); i < n; i++) {
        const host = r.utf();
        const port = r.int();
        const pairs: [string, number][] = [];
        for (let j = 0, m = r.count(); j < m; j++) {
          const topic = topics.get(r.int());
          if (topic === undefined) throw new RangeError('AssignmentInfo: unknown topic index');
          pairs.push([topic, r.int()]);
        }
        out[`${host}:${port}`] = pairs;
      }
      return out;
    };
    const partitionsByHost = byHost();
    const standbyPartitionsByHost = byHost();
    const errCode = r.int();
    const next = r.long();
    if (r.remaining !== 0) return null;
    const order = (a: string, b: string) => {
      const [sa, pa] = a.split('_').map(Number) as [number, number];
      const [sb, pb] = b.split('_').map(Number) as [number, number];
      return sa - sb || pa - pb;
    };
    return {
      version,
      commonlySupportedVersion,
      activeTasks: activeTasks.sort(order),
      standbyTasks: standbyTasks.sort(order),
      partitionsByHost,
      standbyPartitionsByHost,
      errCode,
      nextRebalanceMs: next === LONG_MAX ? 0 : Number(next),
    };
  } catch (e) {
    if (e instanceof RangeError) return null;
    throw e;
  }
}
