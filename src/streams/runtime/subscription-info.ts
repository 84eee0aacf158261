// Kafka Streams' SubscriptionInfo bytes (the user data of a "stream" subscription), as Kafka's generated
// SubscriptionInfoData writes them: no flexible versions, so plain big-endian fields, int32-counted arrays,
// int32-prefixed bytes and int16-prefixed strings. Brook writes and reads versions 1 to 11 (11, Kafka 3.x's latest,
// unless version probing or upgrade.from chose an older one).
//
// Version 11, in order: int32 version, int32 latestSupportedVersion, uuid processId (16 bytes), bytes
// userEndPoint ("host:port" in UTF-8, empty without application.server), [] TaskOffsetSum (int32 topicGroupId,
// int32 partition, int64 offsetSum, nullable string namedTopology), int8 uniqueField, int32 errorCode,
// [] ClientTag (bytes key, bytes value). Versions 7 to 10 are written too, for version probing (KIP-268): a
// member speaks the version its group can read (streams-assignor.ts); 1 and 2 for upgrade.from 0.10.0 and
// 0.10.1-1.1, whose releases predate version probing (config.ts).
// Older versions: latestSupportedVersion from 3, userEndPoint from 2; 1-6 carry prevTasks and standbyTasks as
// [] (int32 topicGroupId, int32 partition) instead of the sums, after the process id and before the endpoint
// (prevTasks: the tasks of LATEST_OFFSET; standbyTasks: every other task with local state, as Kafka's
// SubscriptionInfo derives them from the sums); 7-9 nest the sums per topic group as
// [] (int32 partition, int64 offsetSum); uniqueField from 8, errorCode from 9, clientTags from 11.
//
// The sums say what the client holds, as Kafka's TaskManager reports it: a task that ran active in the previous
// generation has LATEST_OFFSET (-2); every other task with local state (a standby, or state left on disk) has its
// changelog offset sum, or UNKNOWN_OFFSET_SUM (-3). So on reading, -2 marks the previous active tasks and every
// other entry a standby (Kafka's SubscriptionInfo.standbyTasks()), with its sum when it is known.
//
// The bytes are read and written with the protocol's Reader and Writer; the process id is a java.util.UUID
// (java-encoding.ts), not Kafka's base64url Uuid.

import { DecodeError, Reader, Writer } from '../../protocol/primitives/index.js';
import { isJavaUuid, readJavaUuid, writeJavaUuid } from './java-encoding.js';
import type { SubscriptionInfo } from './streams-assignor.js';

export const SUBSCRIPTION_INFO_VERSION = 11;
export const LATEST_SUPPORTED_VERSION = 11;
/** The oldest version Brook writes (version 1: Kafka Streams 0.10.0). */
export const EARLIEST_WRITTEN_VERSION = 1;
/** Kafka's EARLIEST_PROBEABLE_VERSION: from 3 a subscription says its latest supported version (KIP-268). */
export const EARLIEST_PROBEABLE_VERSION = 3;
/** The first version that carries offset sums instead of previous and standby task lists (KIP-441). */
export const MIN_VERSION_OFFSET_SUM = 7;
/** Kafka's Task.LATEST_OFFSET: the task ran active here. */
export const LATEST_OFFSET = -2;
/** Kafka's SubscriptionInfo.UNKNOWN_OFFSET_SUM: state held, sum not known. */
export const UNKNOWN_OFFSET_SUM = -3;

function taskId(id: string): [number, number] {
  const [group, partition] = id.split('_').map(Number) as [number, number];
  return [group, partition];
}

function compareTasks(a: string, b: string): number {
  const [ga, pa] = taskId(a);
  const [gb, pb] = taskId(b);
  return ga - gb || pa - pb;
}

/**
 * The bytes of a subscription in `version` (1 to 11; the latest by default), saying this instance reads up to
 * `latestSupportedVersion` (from version 3); `uniqueField` is Kafka's per-subscription counter byte (from 8).
 */
export function encodeSubscriptionInfo(
  info: SubscriptionInfo,
  uniqueField = 0,
  version = SUBSCRIPTION_INFO_VERSION,
  latestSupportedVersion = LATEST_SUPPORTED_VERSION,
): Buffer {
  if (version < EARLIEST_WRITTEN_VERSION || version > SUBSCRIPTION_INFO_VERSION)
    throw new Error(`SubscriptionInfo version ${version} is not written`);
  if (!isJavaUuid(info.processId)) throw new Error(`process id ${info.processId} is not a UUID`);
  const sums = new Map<string, number>();
  for (const [t, sum] of Object.entries(info.taskOffsetSums)) if (sum >= 0) sums.set(t, sum);
  for (const t of info.standbyTasks) if (!sums.has(t)) sums.set(t, UNKNOWN_OFFSET_SUM);
  for (const t of info.prevTasks) sums.set(t, LATEST_OFFSET);
  const w = new Writer();
  w.int32(version);
  if (version >= EARLIEST_PROBEABLE_VERSION) w.int32(latestSupportedVersion);
  writeJavaUuid(w, info.processId);
  const tasks = [...sums.keys()].sort(compareTasks);
  if (version < MIN_VERSION_OFFSET_SUM) {
    const lists = [
      tasks.filter((t) => sums.get(t) === LATEST_OFFSET),
      tasks.filter((t) => sums.get(t) !== LATEST_OFFSET),
    ];
    for (const list of lists) {
      w.arrayCount(list.length);
      for (const t of list) {
        const [group, partition] = taskId(t);
        w.int32(group);
        w.int32(partition);
      }
    }
    if (version >= 2) w.bytes(Buffer.from(info.userEndpoint, 'utf8'));
    return w.toBuffer();
  }
  w.bytes(Buffer.from(info.userEndpoint, 'utf8'));
  if (version >= 10) {
    w.arrayCount(tasks.length);
    for (const t of tasks) {
      const [group, partition] = taskId(t);
      w.int32(group);
      w.int32(partition);
      w.int64(BigInt(sums.get(t)!));
      w.nullableString(null); // namedTopology
    }
  } else {
    // Versions 7-9: the sums nested per topic group (sub-topology).
    const groups = new Map<number, string[]>();
    for (const t of tasks) {
      const group = taskId(t)[0];
      groups.set(group, [...(groups.get(group) ?? []), t]);
    }
    w.arrayCount(groups.size);
    for (const [group, ids] of groups) {
      w.int32(group);
      w.arrayCount(ids.length);
      for (const t of ids) {
        w.int32(taskId(t)[1]);
        w.int64(BigInt(sums.get(t)!));
      }
    }
  }
  if (version >= 8) w.int8(uniqueField);
  if (version >= 9) w.int32(info.errorCode);
  if (version < 11) return w.toBuffer();
  const tags = Object.entries(info.clientTags ?? {});
  w.arrayCount(tags.length);
  for (const [k, v] of tags) {
    w.bytes(Buffer.from(k, 'utf8'));
    w.bytes(Buffer.from(v, 'utf8'));
  }
  return w.toBuffer();
}

/**
 * The used and latest supported versions a subscription announces (Kafka reads only these two of a version newer
 * than its own: version probing), or null for bytes too short or not binary. Versions 1 and 2 had no latest
 * supported version: it is their own.
 */
export function subscriptionVersions(
  bytes: Buffer,
): { version: number; latestSupportedVersion: number } | null {
  if (bytes.length < 4 || bytes[0] === 0x7b) return null;
  const version = bytes.readInt32BE(0);
  if (version < 1) return null;
  if (version < 3) return { version, latestSupportedVersion: version };
  if (bytes.length < 8) return null;
  return { version, latestSupportedVersion: bytes.readInt32BE(4) };
}

/**
 * A SubscriptionInfo of versions 1 to `latestSupported` (11 unless this instance plays an older one), or null:
 * a newer version (read only for its versions, subscriptionVersions), bytes that do not parse, or tasks of named
 * topologies (Brook has none).
 */
export function decodeSubscriptionInfoBytes(
  bytes: Buffer,
  latestSupported = LATEST_SUPPORTED_VERSION,
): SubscriptionInfo | null {
  try {
    const r = new Reader(bytes);
    const version = r.int32();
    if (version < 1 || version > latestSupported) return null;
    const latestSupportedVersion = version >= 3 ? r.int32() : version;
    const processId = readJavaUuid(r);
    const prevTasks: string[] = [];
    const standbyTasks: string[] = [];
    const taskOffsetSums: Record<string, number> = {};
    const sum = (group: number, partition: number, offsetSum: number) => {
      const id = `${group}_${partition}`;
      if (offsetSum === LATEST_OFFSET) prevTasks.push(id);
      else {
        standbyTasks.push(id);
        if (offsetSum >= 0) taskOffsetSums[id] = offsetSum;
      }
    };
    if (version < MIN_VERSION_OFFSET_SUM) {
      for (const list of [prevTasks, standbyTasks])
        for (let i = 0, n = r.arrayCount(); i < n; i++) list.push(`${r.int32()}_${r.int32()}`);
    }
    const userEndpoint = version >= 2 ? r.bytes().toString('utf8') : '';
    if (version >= MIN_VERSION_OFFSET_SUM) {
      for (let i = 0, n = r.arrayCount(); i < n; i++) {
        const group = r.int32();
        if (version >= 10) {
          const partition = r.int32();
          const offsetSum = Number(r.int64());
          if (r.nullableString() !== null) return null;
          sum(group, partition, offsetSum);
        } else {
          for (let j = 0, m = r.arrayCount(); j < m; j++) sum(group, r.int32(), Number(r.int64()));
        }
      }
    }
    if (version >= 8) r.int8(); // uniqueField
    const errorCode = version >= 9 ? r.int32() : 0;
    const clientTags: Record<string, string> = {};
    if (version >= 11)
      for (let i = 0, n = r.arrayCount(); i < n; i++) {
        const key = r.bytes().toString('utf8');
        clientTags[key] = r.bytes().toString('utf8');
      }
    if (r.remaining !== 0) return null;
    return {
      version,
      latestSupportedVersion,
      processId,
      userEndpoint,
      prevTasks: prevTasks.sort(compareTasks),
      standbyTasks: standbyTasks.sort(compareTasks),
      taskOffsetSums,
      errorCode,
      clientTags,
    };
  } catch (e) {
    if (e instanceof DecodeError || e instanceof RangeError) return null;
    throw e;
  }
}
