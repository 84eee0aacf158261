// Fetch (1): consumers and followers read whole batches from partition leaders, as bytes. The request is
// resolved against its fetch session (KIP-227), each partition is read up to its limits (the first batch of the
// response always whole), and when fewer than fetch.min.bytes are ready the request waits in the fetch
// purgatory until produce adds data or max.wait.ms passes. Old versions (v0-v3) get records converted to the
// magic they understand.
//
// The bytes are read off the event loop: each partition's read is planned synchronously (leader checks,
// bounds, the byte budget shared in request order) and all reads then run at once in the thread pool; the
// buffers they fill go into the response as they are (the encoder attaches them by reference). One small read of
// a fetch runs on the event loop instead, once the others are started (storage/inline-reads.ts): a fetch whose
// only file read is one partition's has nothing to run beside it, and the thread pool's wake-ups cost as much as
// the copy. While a request waits, readiness is checked by planning alone (`readableBytes`), without reading.
//
// Follower fetching (KIP-392): a consumer of Fetch v11+ may read from a follower, up to the follower's high
// watermark. The leader, when replica.selector.class is set, sends a consumer that names its rack to an in-sync
// follower in that rack (preferred_read_replica), reading nothing for that partition and answering at once.

import type { BrokerId, Offset } from '../../common/ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import {
  encodeFetchResponse,
  type FetchRequest,
  type FetchResponse,
  type FetchResponseFetchableTopicResponse,
  type FetchResponsePartitionData,
} from '../../protocol/messages/01-fetch.js';
import { ZERO_UUID } from '../../protocol/messages/codec-support.js';
import { Writer } from '../../protocol/primitives/index.js';
import { BatchFaultError } from '../../protocol/records/batch-fault.js';
import {
  BATCH_HEADER_BYTES,
  batchHeader,
  CompressionType,
  LOG_OVERHEAD,
} from '../../protocol/records/batch-header.js';
import { downConvertRecords } from '../../protocol/records/legacy-convert.js';
import { ApiKey } from '../../protocol/registry.js';
import { StorageErrorCode } from '../../storage/error-codes.js';
import { FetchInlineRead, type InlineReadGate } from '../../storage/inline-reads.js';
import type { Log, ReadResult } from '../../storage/log.js';
import { defineHandler, type RequestContext } from '../api-handler.js';
import { AclOperation, authorizeCluster, authorizeTopic } from '../authorization.js';
import { completeDelayedRequests } from '../broker-services.js';
import { hasNews, type ResolvedSession, type SessionPartition } from '../fetch-session-cache.js';
import { readablePartition } from '../replica/leader-lookup.js';
import { NO_PREFERRED_REPLICA, preferredReadReplica } from '../replica/read-replica-selector.js';
import {
  fetchOffsetIsProgress,
  checkLastFetchedEpoch as lastFetchedEpochCheck,
} from '../replica/replica-fetch-rules.js';
import { partitionKey } from '../replica/replica-manager.js';

const READ_COMMITTED = 1;
/** Consumers send rack_id from Fetch v11 on, and may read from followers from then (Kafka's fetchOnlyLeader). */
const FOLLOWER_FETCH_VERSION_MIN = 11;
const ZSTD_FETCH_VERSION_MIN = 10;
/** The newest Fetch version whose clients get NOT_LEADER_OR_FOLLOWER for KAFKA_STORAGE_ERROR (see errorForVersion). */
const STORAGE_ERROR_FETCH_VERSION_MAX = 5;
/** Fetch v12 added lastFetchedEpoch and the diverging epoch of the response (KIP-320 for followers). */
const LAST_FETCHED_EPOCH_VERSION_MIN = 12;
/** Fetch v13 names topics by id (KIP-516). */
const TOPIC_ID_VERSION_MIN = 13;
const EMPTY = Buffer.alloc(0);
const NO_EPOCH_END = { epoch: -1, endOffset: -1n };
const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };
const NO_SNAPSHOT = { endOffset: -1n, epoch: -1 };

interface PartitionRead {
  readonly session: SessionPartition;
  readonly data: FetchResponsePartitionData;
  readonly bytes: number;
}

interface FetchPlan {
  readonly version: number;
  /** The fetching follower's broker id; negative for a consumer (Kafka's -1) or a debugging client. */
  readonly replicaId: BrokerId;
  /** The follower's broker epoch (Fetch v15+, KIP-903), -1 when the version does not carry it. */
  readonly replicaEpoch: number;
  readonly isolationLevel: number;
  readonly maxBytes: number;
  /** The consumer's rack_id ('' for none or a follower). */
  readonly rackId: string;
  /** A consumer that may read from a follower of the partition, not only from its leader. */
  readonly followerReadAllowed: boolean;
  readonly partitions: readonly SessionPartition[];
  readonly resolved: Exclude<ResolvedSession, { kind: 'error' }>;
  /** Pool references of the views the reads returned (see Log.startRead). */
  readonly pins: Buffer[];
  /** Keys of the partitions read for a throttled follower (leader.replication.throttled.replicas). */
  readonly throttledReplicaReads: string[];
  /** Topics the principal may not read (TOPIC_AUTHORIZATION_FAILED); null with no authorizer or none denied. */
  readonly deniedTopics: ReadonlySet<string> | null;
}

export const fetchHandler = defineHandler<FetchRequest, FetchResponse>({
  apiKey: ApiKey.FETCH,
  minVersion: 0,
  maxVersion: 17,
  handle(context, request) {
    const version = context.apiVersion;
    const replicaId = (version >= 15 ? request.replicaState.replicaId : request.replicaId) as BrokerId;
    const isFollower = replicaId >= 0;
    const requested = request.topics.flatMap((t) =>
      t.partitions.map((p) => sessionPartition(context, version, t, p)),
    );
    const forgotten = request.forgottenTopicsData.flatMap((t) =>
      t.partitions.map((p) => `${version >= 13 ? t.topicId : t.topic}:${p}`),
    );
    const { fetchSessions, config, quotas } = context.services;
    // Replica fetches are not client-quota'd; a consumer asks for no more than its quota allows in one window.
    if (isFollower) context.exemptFromRequestQuota();
    const quotaBytesMax = isFollower
      ? Number.POSITIVE_INFINITY
      : quotas.fetch.maxValueInQuotaWindow(context.quotaUser, context.clientId);
    const resolved = fetchSessions.resolve(
      request.sessionId,
      request.sessionEpoch,
      requested,
      forgotten,
      isFollower,
      version >= TOPIC_ID_VERSION_MIN,
    );
    if (resolved.kind === 'error') {
      return {
        throttleTimeMs: 0,
        errorCode: resolved.errorCode,
        sessionId: 0,
        responses: [],
        nodeEndpoints: [],
      };
    }
    if (resolved.kind === 'incremental' && version >= TOPIC_ID_VERSION_MIN)
      resolveUnknownTopicNames(context, resolved.session.partitions.values());
    const partitions =
      resolved.kind === 'sessionless' ? requested : [...resolved.session.partitions.values()];
    const plan: FetchPlan = {
      version,
      replicaId,
      replicaEpoch: version >= 15 ? Number(request.replicaState.replicaEpoch) : -1,
      isolationLevel: request.isolationLevel,
      rackId: isFollower ? '' : request.rackId,
      followerReadAllowed: !isFollower && version >= FOLLOWER_FETCH_VERSION_MIN,
      // fetch.max.bytes caps every fetch, a follower's too, as Kafka's KafkaApis (replica.fetch.response.max.bytes
      // is what this broker's own followers ask for).
      maxBytes: Math.max(0, Math.min(request.maxBytes, config.fetchMaxBytes, Math.trunc(quotaBytesMax))),
      partitions,
      resolved,
      pins: [],
      throttledReplicaReads: [],
      deniedTopics:
        context.services.authorizer === null
          ? null
          : deniedTopics(context, replicaId >= 0, version, partitions),
    };
    if (isFollower) noteFollowerFetch(context, plan);
    // As Kafka's KafkaApis: a fetch waits for no more bytes than its response may carry.
    const minBytes = Math.min(request.minBytes, plan.maxBytes);
    // A partition sent to another replica is answered at once, as one with an error is.
    const ready = (reads: readonly PartitionRead[]): boolean =>
      reads.reduce((n, r) => n + r.bytes, 0) >= minBytes ||
      confirmationWaits(context, plan) ||
      reads.some(
        (r) =>
          r.data.errorCode !== 0 ||
          r.data.preferredReadReplica !== NO_PREFERRED_REPLICA ||
          hasDivergingEpoch(r.data),
      );
    // Views of pooled request frames the reads return (tail cache); held until the response is written.
    context.releaseAfterResponse(plan.pins);
    const reading = readAll(context, plan);
    // Checked as the reads are planned, on the state they read, when they fall short of fetch.min.bytes: a fetch
    // Kafka's DelayedFetch would complete at once (a later partition's batch over the bytes left counts in full)
    // is answered from this read, not parked to complete at once and read everything again.
    const satisfied =
      request.maxWaitMs > 0 && reading.plannedBytes < minBytes && readyToRead(context, plan, minBytes);
    return reading.reads.then((first) => {
      if (request.maxWaitMs <= 0 || satisfied || ready(first) || plan.partitions.length === 0)
        return respond(context, plan, first);
      context.markWaiting();
      return new Promise<FetchResponse>((resolve) => {
        context.services.fetchPurgatory.tryCompleteElseWatch(
          {
            tryComplete: () => readyToRead(context, plan, minBytes),
            onComplete: () => {
              readAll(context, plan).reads.then(
                (reads) => resolve(respond(context, plan, reads)),
                // A read that failed (an I/O error) answers with what was read before the wait.
                () => resolve(respond(context, plan, first)),
              );
            },
          },
          plan.partitions.map((p) => partitionKey(p.topicName, p.partition)),
          request.maxWaitMs,
        );
      });
    });
  },
});

/**
 * Kafka's checks: a follower's fetch needs CLUSTER_ACTION (else every partition is TOPIC_AUTHORIZATION_FAILED, as
 * Kafka answers, one of an unknown topic id too), a consumer's needs READ on each topic. Checked once per request,
 * for the partitions of the session too. Before v13 the empty name is a name like any other, checked before the
 * metadata is; from v13 it stands for an unknown topic id, which a consumer is told of without a check.
 */
function deniedTopics(
  context: RequestContext,
  follower: boolean,
  version: number,
  partitions: readonly SessionPartition[],
): ReadonlySet<string> | null {
  const denied = new Set<string>();
  const clusterDenied = follower && !authorizeCluster(context, AclOperation.CLUSTER_ACTION);
  const checked = new Set<string>();
  for (const p of partitions) {
    if (checked.has(p.topicName)) continue;
    if (p.topicName === '' && version >= TOPIC_ID_VERSION_MIN && !clusterDenied) continue;
    checked.add(p.topicName);
    if (clusterDenied || (!follower && !authorizeTopic(context, AclOperation.READ, p.topicName))) {
      denied.add(p.topicName);
    }
  }
  return denied.size === 0 ? null : denied;
}

/**
 * Kafka's CachedPartition.maybeResolveUnknownName, on every incremental fetch: a partition added to a session by a
 * topic id this broker did not know then (the client learned it from a broker the controller's UpdateMetadata
 * reached first) was answered UNKNOWN_TOPIC_ID and stays in the session, and the client does not name it again
 * while its position is unchanged. Its name is looked up again until the broker knows it, so that it is read then.
 */
function resolveUnknownTopicNames(context: RequestContext, partitions: Iterable<SessionPartition>): void {
  for (const p of partitions) {
    if (p.topicName !== '') continue;
    const topic = context.services.metadata.topicById(p.topicId);
    if (topic !== undefined) p.topicName = topic.name;
  }
}

function sessionPartition(
  context: RequestContext,
  version: number,
  topic: FetchRequest['topics'][number],
  p: FetchRequest['topics'][number]['partitions'][number],
): SessionPartition {
  const byId = version >= 13;
  const name = byId ? (context.services.metadata.topicById(topic.topicId)?.name ?? '') : topic.topic;
  return {
    key: `${byId ? topic.topicId : topic.topic}:${p.partition}`,
    topicName: name,
    topicId: byId ? topic.topicId : (context.services.metadata.topic(topic.topic)?.topicId ?? ''),
    partition: p.partition,
    // Branded as it enters; every read checks it against the log's range (OFFSET_OUT_OF_RANGE).
    fetchOffset: Number(p.fetchOffset) as Offset,
    partitionMaxBytes: p.partitionMaxBytes,
    logStartOffset: Number(p.logStartOffset),
    currentLeaderEpoch: p.currentLeaderEpoch,
    lastFetchedEpoch: p.lastFetchedEpoch,
    sentHighWatermark: -1,
    sentLastStableOffset: -1,
    sentLogStartOffset: -1,
  };
}

/**
 * Plans every partition's read in request order (the budget of fetch.max.bytes shared by planned sizes), then
 * lets the reads run together and finishes each partition's answer when its bytes arrive. Answers the bytes
 * planned, known at once, with the reads.
 */
function readAll(
  context: RequestContext,
  plan: FetchPlan,
): { readonly plannedBytes: number; readonly reads: Promise<PartitionRead[]> } {
  let plannedBytes = 0;
  let remaining = plan.maxBytes;
  let anyRecords = false;
  const reads: Promise<PartitionRead>[] = [];
  // A fetch reads one file range on the event loop at most, after starting the others (inline-reads.ts); a fetch
  // of one partition has no other read, and needs no share of its own.
  const broker = context.services.logs.inlineReads;
  const share = plan.partitions.length === 1 ? null : new FetchInlineRead(broker);
  try {
    for (const p of plan.partitions) {
      const read = startPartitionRead(
        context,
        plan,
        p,
        remaining,
        !anyRecords && !hardMaxBytes(plan),
        share ?? broker,
      );
      remaining = Math.max(0, remaining - read.bytes);
      plannedBytes += read.bytes;
      if (read.bytes > 0) anyRecords = true;
      reads.push(read.result);
    }
  } finally {
    share?.start();
  }
  return { plannedBytes, reads: Promise.all(reads) };
}

/**
 * A follower's fetch of partitions this broker leads at the epoch the fetch names shows the follower has not moved
 * to a newer leader: it counts towards the leadership confirmations waiting on them (leadership-confirmations.ts).
 * Noted once per request, as it arrives (a parked fetch plans its reads again when it completes).
 */
function noteFollowerFetch(context: RequestContext, plan: FetchPlan): void {
  const confirmations = context.services.leadershipConfirmations;
  if (!confirmations.active) return;
  for (const p of plan.partitions) {
    if (p.topicName === '' || plan.deniedTopics?.has(p.topicName) === true) continue;
    if (!confirmations.isWaiting(partitionKey(p.topicName, p.partition))) continue;
    const partition = readablePartition(
      context.services,
      p.topicName,
      p.partition,
      p.currentLeaderEpoch,
      false,
    );
    if (typeof partition !== 'number' && p.currentLeaderEpoch === partition.leaderEpoch)
      confirmations.onFollowerFetch(partition, plan.replicaId);
  }
}

/**
 * A follower's fetch of a partition whose leadership is being confirmed is answered without waiting for data, while
 * the confirmation still needs fetches of this follower.
 */
function confirmationWaits(context: RequestContext, plan: FetchPlan): boolean {
  const confirmations = context.services.leadershipConfirmations;
  if (plan.replicaId < 0 || !confirmations.active) return false;
  return plan.partitions.some((p) =>
    confirmations.shouldAnswerAtOnce(partitionKey(p.topicName, p.partition), plan.replicaId),
  );
}

/**
 * Whether a waiting fetch can be answered, as Kafka's DelayedFetch.tryComplete: a partition has an error (its
 * leader moved, it is gone, its epoch is fenced), its fetch offset is below the log start, above the end it may
 * read to or in an older segment than that end, or (a follower's) a partition's leadership is being confirmed;
 * else when the bytes past the fetch offsets reach fetch.min.bytes. Each partition counts what it has up to its
 * partition max bytes, whether or not a whole batch fits and whatever the response's max bytes: a partition whose
 * next batch is over its max bytes (not sent unless first in the response) counts them in full, so the fetch is
 * answered, not held for max.wait.ms.
 */
function readyToRead(context: RequestContext, plan: FetchPlan, minBytes: number): boolean {
  if (confirmationWaits(context, plan)) return true;
  let bytes = 0;
  for (const p of plan.partitions) {
    if (p.topicName === '' || plan.deniedTopics?.has(p.topicName) === true) return true;
    if (hostsOtherTopic(context, plan, p)) return true;
    const partition = readablePartition(
      context.services,
      p.topicName,
      p.partition,
      p.currentLeaderEpoch,
      plan.followerReadAllowed,
    );
    if (typeof partition === 'number') return true;
    const log = partition.log;
    const bound = readBound(plan, log);
    // Above the end it may read to (a follower's log end, a consumer's high watermark or last stable offset): a
    // truncated log, or a consumer ahead of a new leader's high watermark, is answered at once, as in Kafka.
    const end = plan.replicaId >= 0 ? log.logEndOffset : bound;
    if (p.fetchOffset < log.logStartOffset || p.fetchOffset > end) return true;
    // A throttled replica's bytes do not count while the rate is over (Kafka's DelayedFetch), else the follower
    // would be answered at once with nothing and come straight back.
    if (plan.replicaId >= 0 && !partition.isr.includes(plan.replicaId)) {
      const quota = context.services.leaderReplicationQuota;
      if (quota.isThrottled(p.topicName, p.partition) && quota.isQuotaExceeded(Date.now())) continue;
    }
    if (log.onOlderSegment(p.fetchOffset, bound)) return true;
    const maxBytes = Math.max(0, p.partitionMaxBytes);
    bytes += Math.min(maxBytes, log.readableBytes(p.fetchOffset, maxBytes, bound, true));
    if (bytes >= minBytes) return true;
  }
  return false;
}

/**
 * Whether the fetch's sizes are hard limits, even for a partition's first batch: Fetch v0-v2, before KIP-74 (Kafka's
 * FetchParams.hardMaxBytesLimit). Kafka then cuts the read at the partition's max bytes, and its down-conversion to
 * magic 0/1 drops the cut batch, so a first batch over the limit is answered with an empty message set.
 */
function hardMaxBytes(plan: FetchPlan): boolean {
  return plan.version <= 2;
}

/** Followers read up to the log end (what is written), consumers to the high watermark or last stable offset. */
function readBound(plan: FetchPlan, log: Log): Offset {
  return plan.replicaId >= 0
    ? log.writtenEndOffset
    : plan.isolationLevel === READ_COMMITTED
      ? log.lastStableOffset
      : log.highWatermark;
}

function startPartitionRead(
  context: RequestContext,
  plan: FetchPlan,
  p: SessionPartition,
  remainingBytes: number,
  minOneBatch: boolean,
  inline: InlineReadGate,
): { readonly bytes: number; readonly result: Promise<PartitionRead> } {
  const fail = (errorCode: number): { bytes: number; result: Promise<PartitionRead> } => ({
    bytes: 0,
    result: Promise.resolve({
      session: p,
      data: partitionData(p.partition, errorCode, -1, -1, -1, null, EMPTY),
      bytes: 0,
    }),
  });
  // Authorization first, as Kafka's KafkaApis: a denied empty name answers TOPIC_AUTHORIZATION_FAILED.
  if (plan.deniedTopics?.has(p.topicName) === true) return fail(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  // From v13 an empty name is an id no topic has; before, it is a name no topic has (Kafka's answers for each).
  if (p.topicName === '') {
    return fail(
      plan.version >= TOPIC_ID_VERSION_MIN
        ? ErrorCode.UNKNOWN_TOPIC_ID
        : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    );
  }
  if (hostsOtherTopic(context, plan, p)) return fail(ErrorCode.INCONSISTENT_TOPIC_ID);
  const partition = readablePartition(
    context.services,
    p.topicName,
    p.partition,
    p.currentLeaderEpoch,
    plan.followerReadAllowed,
  );
  if (typeof partition === 'number') return fail(partition);
  const log = partition.log;
  const divergence = checkLastFetchedEpoch(plan, p, log);
  if (divergence !== null) {
    const answered: PartitionRead = { session: p, data: divergence, bytes: 0 };
    if (!log.epochCache.persisting) return { bytes: 0, result: Promise.resolve(answered) };
    // As OffsetForLeaderEpoch's answers: the epoch end it names waits until leader-epoch-checkpoint holds it.
    const stored = log.epochCache.whenPersisted().then(
      () => answered,
      () => ({
        ...answered,
        data: partitionData(p.partition, ErrorCode.KAFKA_STORAGE_ERROR, -1, -1, -1, null, EMPTY),
      }),
    );
    return { bytes: 0, result: stored };
  }
  if (plan.replicaId >= 0) {
    // leader.replication.throttled.rate (Kafka's shouldLeaderThrottle): a throttled replica out of the ISR gets
    // nothing while the rate is over; what it gets otherwise is recorded against the rate.
    const quota = context.services.leaderReplicationQuota;
    const throttled = !partition.isr.includes(plan.replicaId) && quota.isThrottled(p.topicName, p.partition);
    if (throttled && quota.isQuotaExceeded(Date.now())) {
      const data = partitionData(
        p.partition,
        ErrorCode.NONE,
        log.highWatermark,
        log.lastStableOffset,
        log.logStartOffset,
        null,
        EMPTY,
      );
      return { bytes: 0, result: Promise.resolve({ session: p, data, bytes: 0 }) };
    }
    if (throttled) plan.throttledReplicaReads.push(p.key);
    // Only a fetch offset this log holds is the follower's progress (see fetchOffsetIsProgress).
    if (fetchOffsetIsProgress(log, p.fetchOffset)) {
      const moved = partition.recordFollowerEnd(plan.replicaId, p.fetchOffset, undefined, plan.replicaEpoch);
      const started = partition.recordFollowerStart(plan.replicaId, p.logStartOffset);
      // The high watermark moved: on a quiet partition nothing else would wake the consumer fetches waiting for
      // it before their max wait. The follower's log start moved: a DeleteRecords may wait for it.
      if (moved || started) completeDelayedRequests(context.services, partition.key);
    }
  } else if (plan.followerReadAllowed) {
    const preferred = preferredReadReplica(partition, context.services.metadata, {
      selector: context.services.config.replicaSelector,
      clientRack: plan.rackId,
      listenerName: context.listenerName,
      fetchOffset: p.fetchOffset,
      nowMs: Date.now(),
    });
    // Kafka reads nothing for a partition it sends elsewhere, and gives the leader's offsets with the pointer.
    if (preferred !== NO_PREFERRED_REPLICA) {
      const data = partitionData(
        p.partition,
        ErrorCode.NONE,
        log.highWatermark,
        log.lastStableOffset,
        log.logStartOffset,
        null,
        EMPTY,
      );
      data.preferredReadReplica = preferred;
      return { bytes: 0, result: Promise.resolve({ session: p, data, bytes: 0 }) };
    }
  }
  const maxBytes = Math.min(p.partitionMaxBytes, remainingBytes);
  const read = log.startRead(p.fetchOffset, maxBytes, readBound(plan, log), minOneBatch, plan.pins, inline);
  return {
    bytes: read.bytes,
    // The partition's log, not `log`: a move between log directories may swap it while the bytes are read (the
    // new log holds the same offsets; the old one is closed).
    result: read.result.then((result) =>
      finishPartitionRead(plan, p, partition.log, partition.settings.messageDownconversionEnable, result),
    ),
  };
}

/**
 * Whether the replica hosted here under the partition's topic name belongs to another topic than the id the fetch
 * (v13+) names. A fetch session keeps the id each partition was added with, and the name it resolved to then: once
 * that topic is deleted and another is created under its name, an incremental fetch of the old session would read
 * the new topic and hand its records over under the old id (the client does not learn of the change until its
 * metadata is refreshed). Kafka's ReplicaManager.readFromLog compares the ids once it has found the hosted
 * partition, before the leader epoch and leadership checks, and answers INCONSISTENT_TOPIC_ID, on which the Java
 * consumer refreshes its metadata. As in Kafka, a zero id on either side (a replica created from a request that
 * carried none) is never inconsistent.
 */
function hostsOtherTopic(context: RequestContext, plan: FetchPlan, p: SessionPartition): boolean {
  if (plan.version < TOPIC_ID_VERSION_MIN || p.topicId === '' || p.topicId === ZERO_UUID) return false;
  const hosted = context.services.replicas.get(p.topicName, p.partition);
  if (hosted === undefined || hosted.topicId === '' || hosted.topicId === ZERO_UUID) return false;
  return hosted.topicId !== p.topicId;
}

/**
 * KIP-320 (Kafka's Partition.readRecords): a fetch of v12+ names the epoch of the last batch the fetcher has
 * (lastFetchedEpoch). When this log ends that epoch below the fetch offset, or knows only an older epoch than it,
 * the fetcher's log has diverged from this one: it gets the end of the epoch both logs share (divergingEpoch),
 * no records, and its fetch does not count as its progress; it truncates and fetches again. An epoch this log
 * cannot place, or a fetch offset below the log start, is OFFSET_OUT_OF_RANGE. Null when the fetch goes on.
 */
function checkLastFetchedEpoch(
  plan: FetchPlan,
  p: SessionPartition,
  log: Log,
): FetchResponsePartitionData | null {
  if (plan.version < LAST_FETCHED_EPOCH_VERSION_MIN) return null;
  const check = lastFetchedEpochCheck(log, p.fetchOffset, p.lastFetchedEpoch);
  if (check.kind === 'read') return null;
  const data = partitionData(
    p.partition,
    check.kind === 'out-of-range' ? ErrorCode.OFFSET_OUT_OF_RANGE : ErrorCode.NONE,
    log.highWatermark,
    log.lastStableOffset,
    log.logStartOffset,
    null,
    EMPTY,
  );
  if (check.kind === 'diverging')
    data.divergingEpoch = { epoch: check.epoch, endOffset: BigInt(check.endOffset) };
  return data;
}

function hasDivergingEpoch(d: FetchResponsePartitionData): boolean {
  return d.divergingEpoch.epoch >= 0 || d.divergingEpoch.endOffset >= 0n;
}

function finishPartitionRead(
  plan: FetchPlan,
  p: SessionPartition,
  log: Log,
  downconversionEnable: boolean,
  result: ReadResult,
): PartitionRead {
  const fail = (errorCode: number, hw = -1, lso = -1, start = -1): PartitionRead => ({
    session: p,
    data: partitionData(p.partition, errorCode, hw, lso, start, null, EMPTY),
    bytes: 0,
  });
  if (result.errorCode === StorageErrorCode.OffsetOutOfRange) {
    return fail(ErrorCode.OFFSET_OUT_OF_RANGE, log.highWatermark, log.lastStableOffset, log.logStartOffset);
  }
  // Stored bytes that failed authentication (encryption at rest): the log said why, the client gets no bytes.
  if (result.errorCode === StorageErrorCode.KafkaStorageError) {
    return fail(ErrorCode.KAFKA_STORAGE_ERROR, log.highWatermark, log.lastStableOffset, log.logStartOffset);
  }
  let records = result.records;
  // zstd came with Fetch v10: older clients cannot read it, and Kafka answers them with this error.
  if (plan.version < ZSTD_FETCH_VERSION_MIN && containsZstd(records)) {
    return fail(
      ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
      log.highWatermark,
      log.lastStableOffset,
      log.logStartOffset,
    );
  }
  // message.downconversion.enable=false (Kafka's maybeConvertFetchedData): a consumer whose fetch version needs
  // magic 0 or 1 gets UNSUPPORTED_VERSION instead of converted records, whatever was read; followers are exempt.
  if (plan.version < 4 && plan.replicaId < 0 && !downconversionEnable)
    return fail(ErrorCode.UNSUPPORTED_VERSION);
  if (plan.version < 4 && records.length > 0) {
    try {
      const magic = plan.version <= 1 ? 0 : 1;
      records = downConvertRecords(records, magic, 0, records.length, { firstOffset: p.fetchOffset }).records;
    } catch (err) {
      if (!(err instanceof BatchFaultError)) throw err;
      return fail(err.fault.errorCode, log.highWatermark, log.lastStableOffset, log.logStartOffset);
    }
  }
  const aborted =
    plan.isolationLevel === READ_COMMITTED && plan.version >= 4
      ? log.collectAbortedTxns(p.fetchOffset, result.nextOffset).map((t) => ({
          producerId: BigInt(t.producerId),
          firstOffset: BigInt(t.firstOffset),
        }))
      : null;
  return {
    session: p,
    data: partitionData(
      p.partition,
      ErrorCode.NONE,
      log.highWatermark,
      log.lastStableOffset,
      log.logStartOffset,
      aborted,
      records,
    ),
    bytes: records.length,
  };
}

/**
 * consumer_byte_rate (Kafka's handleFetchRequest): the response's size is recorded; over quota, the consumer
 * gets an empty response with the throttle time instead, the bytes taken back from its rate, and its fetch
 * session left as it was (a new one not made), so that the next fetch returns the same data.
 */
function throttledResponse(
  context: RequestContext,
  plan: FetchPlan,
  reads: readonly PartitionRead[],
): FetchResponse | null {
  const fetchQuota = context.services.quotas.fetch;
  const nowMs = context.services.clock.nowMs();
  const bytes = responseSize(plan, reads);
  const user = context.quotaUser;
  const throttleTimeMs = fetchQuota.recordAndGetThrottleTimeMs(user, context.clientId, bytes, nowMs);
  if (throttleTimeMs <= 0) return null;
  fetchQuota.recordNoThrottle(user, context.clientId, -bytes, nowMs);
  context.throttle(throttleTimeMs);
  // Kafka's FullFetchContext makes its session only when it answers with data: the one made for this full fetch
  // goes, or each throttled retry would leave a session holding a slot of the cache.
  if (plan.resolved.kind === 'full') context.services.fetchSessions.remove(plan.resolved.session.id);
  return {
    throttleTimeMs,
    errorCode: ErrorCode.NONE,
    sessionId: plan.resolved.kind === 'incremental' ? plan.resolved.session.id : 0,
    responses: [],
    nodeEndpoints: [],
  };
}

/** Puts a partition's answer under its topic's entry of the response (by topic id, or name before v13). */
function addToTopic(
  byTopic: Map<string, FetchResponseFetchableTopicResponse>,
  session: SessionPartition,
  data: FetchResponseFetchableTopicResponse['partitions'][number],
): void {
  const topicKey = session.topicId || session.topicName;
  let topic = byTopic.get(topicKey);
  if (topic === undefined) {
    topic = { topic: session.topicName, topicId: session.topicId, partitions: [] };
    byTopic.set(topicKey, topic);
  }
  topic.partitions.push(data);
}

/**
 * Kafka's FetchContext.getResponseSize (FetchResponse.sizeOf): 4 bytes and the encoded answer with the
 * partitions it would carry (for an incremental session, those with news), the session left untouched. Empty
 * answers count too, so a consumer polling many partitions uses its quota even when they hold nothing new.
 */
function responseSize(plan: FetchPlan, reads: readonly PartitionRead[]): number {
  const byTopic = new Map<string, FetchResponseFetchableTopicResponse>();
  for (const read of reads) {
    const d = read.data;
    if (plan.resolved.kind === 'incremental') {
      const errorCode = errorForVersion(plan.version, d.errorCode);
      const hw = Number(d.highWatermark);
      const lso = Number(d.lastStableOffset);
      const news = hasNews(read.session, read.bytes > 0, errorCode, hw, lso, Number(d.logStartOffset));
      if (!news && d.preferredReadReplica === NO_PREFERRED_REPLICA && !hasDivergingEpoch(d)) continue;
    }
    addToTopic(byTopic, read.session, d);
  }
  const w = new Writer();
  encodeFetchResponse(w, plan.version, {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    sessionId: 0,
    responses: [...byTopic.values()],
    nodeEndpoints: [],
  });
  return 4 + w.length;
}

function containsZstd(records: Buffer): boolean {
  for (let pos = 0; pos + BATCH_HEADER_BYTES <= records.length; ) {
    if (records[pos + 16] === 2 && batchHeader.compression(records, pos) === CompressionType.Zstd)
      return true;
    const size = LOG_OVERHEAD + records.readInt32BE(pos + 8);
    if (size < BATCH_HEADER_BYTES) return false;
    pos += size;
  }
  return false;
}

/**
 * Kafka's maybeDownConvertStorageError: a client of Fetch v5 or older may not know KAFKA_STORAGE_ERROR (the Java
 * client before 1.0 reads it as a fatal unknown error), so an offline log directory or a failed read is answered
 * NOT_LEADER_OR_FOLLOWER instead, which every client retries after refreshing its metadata, by when the controller
 * has moved the partition's leadership off the failed directory.
 */
function errorForVersion(version: number, errorCode: number): number {
  return errorCode === ErrorCode.KAFKA_STORAGE_ERROR && version <= STORAGE_ERROR_FETCH_VERSION_MAX
    ? ErrorCode.NOT_LEADER_OR_FOLLOWER
    : errorCode;
}

/** One partition of a Fetch answer, with the fields a leader that has no epoch news leaves at their defaults. */
export function partitionData(
  partitionIndex: number,
  errorCode: number,
  hw: number,
  lso: number,
  logStart: number,
  abortedTransactions: FetchResponsePartitionData['abortedTransactions'],
  records: Buffer,
): FetchResponsePartitionData {
  return {
    partitionIndex,
    errorCode,
    highWatermark: BigInt(hw),
    lastStableOffset: BigInt(lso),
    logStartOffset: BigInt(logStart),
    divergingEpoch: NO_EPOCH_END,
    currentLeader: NO_LEADER,
    snapshotId: NO_SNAPSHOT,
    abortedTransactions,
    preferredReadReplica: -1,
    records,
  };
}

function respond(context: RequestContext, plan: FetchPlan, reads: readonly PartitionRead[]): FetchResponse {
  const { fetchSessions, quotas } = context.services;
  if (plan.replicaId < 0 && quotas.fetch.quotasEnabled) {
    const throttled = throttledResponse(context, plan, reads);
    if (throttled !== null) return throttled;
  }
  if (plan.throttledReplicaReads.length > 0) {
    let bytes = 0;
    for (const r of reads) if (plan.throttledReplicaReads.includes(r.session.key)) bytes += r.bytes;
    context.services.leaderReplicationQuota.record(bytes, Date.now());
  }
  const byTopic = new Map<string, FetchResponseFetchableTopicResponse>();
  const stats = context.services.topicStats;
  for (const read of reads) {
    const d = read.data;
    d.errorCode = errorForVersion(plan.version, d.errorCode);
    stats?.fetched(read.session.topicName, read.bytes, d.errorCode, plan.replicaId >= 0);
    const hw = Number(d.highWatermark);
    const lso = Number(d.lastStableOffset);
    const start = Number(d.logStartOffset);
    if (plan.resolved.kind === 'incremental') {
      const include = fetchSessions.shouldInclude(read.session, read.bytes > 0, d.errorCode, hw, lso, start);
      // The next fetch of the session reads the partitions that got nothing this time first.
      if (read.bytes > 0) fetchSessions.moveToBack(plan.resolved.session, read.session);
      // A pointer to another replica must reach the consumer even when nothing else changed (as in Kafka).
      if (!include && d.preferredReadReplica === NO_PREFERRED_REPLICA && !hasDivergingEpoch(d)) continue;
    } else if (plan.resolved.kind === 'full') {
      fetchSessions.remember(read.session, hw, lso, start);
    }
    addToTopic(byTopic, read.session, d);
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    sessionId: plan.resolved.kind === 'sessionless' ? 0 : plan.resolved.session.id,
    responses: [...byTopic.values()],
    nodeEndpoints: [],
  };
}
