// Kafka Streams' AssignmentInfo bytes (the user data of a "stream" assignment), as Kafka's AssignmentInfo.encode
// writes them with a DataOutputStream: big-endian ints, strings as Java's writeUTF (uint16 length, modified UTF-8).
// Brook writes and reads versions 1 to 11 (11 unless version probing or upgrade.from chose an older one):
//   int32 version, int32 commonlySupportedVersion (from 3),
//   active tasks: int32 count, then one task id per assigned partition, in the order of the member's partitions
//     sorted by topic then partition (the receiver pairs them up by position); a task id is int32 subtopology,
//     int32 partition and, from version 10, the named topology's length (0: none; Brook has no named topologies),
//   standby tasks: int32 count, each a task id and its partitions (int32 count, each writeUTF topic, int32 partition),
//   version 1: nothing more;
//   versions 2-4: partitionsByHost: int32 hosts, each writeUTF host, int32 port, int32 count and per partition
//     writeUTF topic, int32 partition;
//   version 5: a topic dictionary of the active partitions' topics (int32 count, each int32 index and writeUTF
//     topic), then partitionsByHost with int32 topic index, int32 partition per partition;
//   versions 6-11: the dictionary of active and standby topics, partitionsByHost then standbyPartitionsByHost;
//   int32 errCode (from 4), int64 nextRebalanceMs (from 7; Long.MAX_VALUE: no probing rebalance is due).
//
// The bytes are read and written with the protocol's Reader and Writer; writeUTF's strings are java-encoding.ts's.
// Kafka iterates hash maps and sets for the hosts, partitions and dictionary; Brook writes them in the order its
// assignor built them, which a reader of any order accepts.

import type { TopicPartition } from '../../client/requests.js';
import { DecodeError, Reader, Writer } from '../../protocol/primitives/index.js';
import { readUtf, writeUtf } from './java-encoding.js';
import type { AssignmentInfo } from './streams-assignor.js';

export const ASSIGNMENT_INFO_VERSION = 11;
/** The oldest version written and read (Kafka Streams 0.10.0). */
const MIN_WRITTEN_VERSION = 1;
/** Versions from which a field or layout appears. */
const MIN_PARTITIONS_BY_HOST_VERSION = 2;
const MIN_COMMONLY_SUPPORTED_VERSION = 3;
const MIN_ERROR_CODE_VERSION = 4;
const MIN_DICTIONARY_VERSION = 5;
const MIN_STANDBY_HOSTS_VERSION = 6;
const MIN_NEXT_REBALANCE_VERSION = 7;
const MIN_NAMED_TOPOLOGY_VERSION = 10;
const LONG_MAX = 9223372036854775807n;

function writeTask(w: Writer, id: string, version: number): void {
  const [st, p] = id.split('_').map(Number) as [number, number];
  w.int32(st);
  w.int32(p);
  if (version >= MIN_NAMED_TOPOLOGY_VERSION) w.int32(0); // no named topology
}

function readTask(r: Reader, version: number): string | null {
  const st = r.int32();
  const p = r.int32();
  // A named topology's name (int32 length, then UTF-16 chars): Brook has none, so such a task is not Brook's.
  if (version >= MIN_NAMED_TOPOLOGY_VERSION && r.int32() !== 0) return null;
  return `${st}_${p}`;
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

/** The topic dictionary of versions 5 and up: each topic once, numbered in order of first appearance. */
function writeDictionary(o: Writer, byHosts: Record<string, [string, number][]>[]): string[] {
  const topics: string[] = [];
  for (const byHost of byHosts)
    for (const pairs of Object.values(byHost))
      for (const [t] of pairs) if (!topics.includes(t)) topics.push(t);
  o.int32(topics.length);
  for (const [i, t] of topics.entries()) {
    o.int32(i);
    writeUtf(o, t);
  }
  return topics;
}

/** One partitionsByHost map: by topic name (versions 2-4) or by dictionary index (`topics`, from 5). */
function writeHosts(o: Writer, byHost: Record<string, [string, number][]>, topics: string[] | null): void {
  const entries = Object.entries(byHost);
  o.int32(entries.length);
  for (const [hostPort, pairs] of entries) {
    const [host, port] = splitHost(hostPort);
    writeUtf(o, host);
    o.int32(port);
    o.int32(pairs.length);
    for (const [t, p] of pairs) {
      if (topics === null) writeUtf(o, t);
      else o.int32(topics.indexOf(t));
      o.int32(p);
    }
  }
}

/**
 * The bytes of a member's assignment in `info.version` (1 to 11) with `info.commonlySupportedVersion` (the
 * group's lowest latest supported version; the version when absent; written from 3). `partitionsOf` gives a
 * task's partitions: the active list holds one task id per assigned partition (in topic, partition order), the
 * standby list each task with its partitions.
 */
export function encodeAssignmentInfo(
  info: AssignmentInfo,
  partitionsOf: (task: string) => TopicPartition[],
): Buffer {
  const version = info.version;
  if (!Number.isInteger(version) || version < MIN_WRITTEN_VERSION || version > ASSIGNMENT_INFO_VERSION)
    throw new Error(`AssignmentInfo version ${version} is not written`);
  const o = new Writer();
  o.int32(version);
  if (version >= MIN_COMMONLY_SUPPORTED_VERSION) o.int32(info.commonlySupportedVersion ?? version);
  const owned = info.activeTasks.flatMap((task) => partitionsOf(task).map((tp) => ({ tp, task })));
  owned.sort((a, b) => byTopicThenPartition(a.tp, b.tp));
  o.int32(owned.length);
  for (const { task } of owned) writeTask(o, task, version);
  o.int32(info.standbyTasks.length);
  for (const task of info.standbyTasks) {
    writeTask(o, task, version);
    const tps = partitionsOf(task);
    o.int32(tps.length);
    for (const tp of tps) {
      writeUtf(o, tp.topic);
      o.int32(tp.partition);
    }
  }
  if (version >= MIN_STANDBY_HOSTS_VERSION) {
    const topics = writeDictionary(o, [info.partitionsByHost, info.standbyPartitionsByHost]);
    writeHosts(o, info.partitionsByHost, topics);
    writeHosts(o, info.standbyPartitionsByHost, topics);
  } else if (version >= MIN_DICTIONARY_VERSION) {
    writeHosts(o, info.partitionsByHost, writeDictionary(o, [info.partitionsByHost]));
  } else if (version >= MIN_PARTITIONS_BY_HOST_VERSION) writeHosts(o, info.partitionsByHost, null);
  if (version >= MIN_ERROR_CODE_VERSION) o.int32(info.errCode);
  if (version >= MIN_NEXT_REBALANCE_VERSION)
    o.int64(
      info.nextRebalanceMs !== undefined && info.nextRebalanceMs > 0
        ? BigInt(info.nextRebalanceMs)
        : LONG_MAX,
    );
  return o.toBuffer();
}

/**
 * An AssignmentInfo of versions 1 to `latestSupported` (11 unless this instance plays an older one), or null
 * for anything else (or tasks of named topologies). Versions 1 and 2 carry no commonly supported version: it is
 * their own, as for their subscriptions.
 */
export function decodeAssignmentInfoBytes(
  bytes: Buffer,
  latestSupported = ASSIGNMENT_INFO_VERSION,
): AssignmentInfo | null {
  try {
    const r = new Reader(bytes);
    const version = r.int32();
    if (version < MIN_WRITTEN_VERSION || version > latestSupported) return null;
    const commonlySupportedVersion = version >= MIN_COMMONLY_SUPPORTED_VERSION ? r.int32() : version;
    const activeTasks: string[] = [];
    for (let i = 0, n = r.arrayCount(); i < n; i++) {
      const t = readTask(r, version);
      if (t === null) return null;
      if (!activeTasks.includes(t)) activeTasks.push(t);
    }
    const standbyTasks: string[] = [];
    for (let i = 0, n = r.arrayCount(); i < n; i++) {
      const t = readTask(r, version);
      if (t === null) return null;
      standbyTasks.push(t);
      for (let j = 0, m = r.arrayCount(); j < m; j++) {
        readUtf(r);
        r.int32();
      }
    }
    // Versions 5 and up name topics by their index in a dictionary; 2 to 4 write each name out.
    const topics = new Map<number, string>();
    if (version >= MIN_DICTIONARY_VERSION)
      for (let i = 0, n = r.arrayCount(); i < n; i++) {
        const index = r.int32();
        topics.set(index, readUtf(r));
      }
    const topicOf = (): string => {
      if (version < MIN_DICTIONARY_VERSION) return readUtf(r);
      const topic = topics.get(r.int32());
      if (topic === undefined) throw new RangeError('AssignmentInfo: unknown topic index');
      return topic;
    };
    const byHost = (): Record<string, [string, number][]> => {
      const out: Record<string, [string, number][]> = {};
      for (let i = 0, n = r.arrayCount(); i < n; i++) {
        const host = readUtf(r);
        const port = r.int32();
        const pairs: [string, number][] = [];
        for (let j = 0, m = r.arrayCount(); j < m; j++) pairs.push([topicOf(), r.int32()]);
        out[`${host}:${port}`] = pairs;
      }
      return out;
    };
    const partitionsByHost = version >= MIN_PARTITIONS_BY_HOST_VERSION ? byHost() : {};
    const standbyPartitionsByHost = version >= MIN_STANDBY_HOSTS_VERSION ? byHost() : {};
    const errCode = version >= MIN_ERROR_CODE_VERSION ? r.int32() : 0;
    const next = version >= MIN_NEXT_REBALANCE_VERSION ? r.int64() : LONG_MAX;
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
    if (e instanceof DecodeError || e instanceof RangeError) return null;
    throw e;
  }
}
