// The consumer: fetches records of assigned partitions from their leaders and hands them out through poll(), an
// async iterator, or run() with callbacks. Partitions come from assign() or, with a group.id, from subscribe()
// and the group protocol (group.ts).
//
// Fetching: one Fetch in flight per leader at a time, for that leader's assigned partitions that are not
// paused, have a position, and hold fewer than PREFETCH_CHUNKS fetched chunks, while the consumer's buffered
// fetch bytes stay below fetch.max.bytes (so the next fetch overlaps the application's work on the current one,
// and the buffer stays bounded). A completed fetch is kept as the response's bytes with only its batch headers
// read (fetch-records.ts), and the next fetch leaves at once, before poll(); records are decoded from those bytes
// when poll() hands them out, up to max.poll.records. A seek, pause or reassignment bumps the partition's epoch, so an answer to an older fetch
// is dropped instead of delivered.
//
// Leadership moves: a retriable partition error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
// UNKNOWN_TOPIC_OR_PARTITION, ...) or a failed fetch request (connection refused or lost, timeout) marks the
// metadata stale, and the partition is not fetched again before a Metadata response taken after the error names
// its leader (Kafka's fetcher requests a metadata update the same way). The fetch loop itself starts that refresh (Cluster.refreshIfDue, at
// most once per retry.backoff.ms), as it does for a partition without a known leader and when the metadata is
// older than metadata.max.age.ms; the cached leaders are all it reads otherwise.
//
// Follower fetching (KIP-392): the consumer sends client.rack as the Fetch rack_id; a leader that answers a
// partition with preferred_read_replica is left for that broker, which the partition is fetched from until
// metadata.max.age.ms passes, a fetch there fails, or it answers the partition with an error (then back to the
// leader, as Kafka's consumer does).
//
// Positions: `position` is the next offset poll() will return. A partition without a position gets one from
// its committed offset (with a group) or from auto.offset.reset; reset 'none' makes poll() throw.
// read_committed drops records of aborted transactions using the fetch response's aborted list, and control
// batches are never delivered.

import { settleWithin } from '../common/deadline.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import type {
  FetchRequest,
  FetchResponse,
  FetchResponsePartitionData,
} from '../protocol/messages/01-fetch.js';
import type { OffsetCommitResponse } from '../protocol/messages/08-offset-commit.js';
import type { OffsetFetchResponse } from '../protocol/messages/09-offset-fetch.js';
import { ZERO_UUID } from '../protocol/messages/codec-support.js';
import type { RecordHeader } from '../protocol/records/record.js';
import { ApiKey } from '../protocol/registry.js';
import type { AssignorName, ConsumerPartitionAssignor } from './assignors.js';
import { Cluster, type PartitionInfo, sleep } from './cluster.js';
import {
  CallTimeoutError,
  ClientStateError,
  ConfigError,
  isRetriableError,
  KafkaClientError,
  KafkaProtocolError,
  LogTruncationError,
  NoOffsetForPartitionError,
  OffsetOutOfRangeError,
  type OffsetWithEpoch,
  RequestTimeoutError,
} from './errors.js';
import { FetchedRecords, type RecordFactory } from './fetch-records.js';
import {
  canUseTopicIds,
  FetchSession,
  type ForgottenPartition,
  responsePartitionsProblem,
  type WantedPartition,
} from './fetch-session.js';
import { GroupMember, type RebalanceListener } from './group.js';
import { ConsumerProtocolMember } from './group-consumer-protocol.js';
import type { GenerationInfo } from './group-membership.js';
import { type ClientOptions, checkDefaultApiTimeoutMs, consumerClientId } from './options.js';
import { fetchEpochEndOffsets, judgeEpochEndOffset, type ValidationOutcome } from './position-validation.js';
import { RecordIterator } from './record-iterator.js';
import {
  checkCloseTimeout,
  checkCommittableOffset,
  EARLIEST_TIMESTAMP,
  epochOrNone,
  findCoordinator,
  LATEST_TIMESTAMP,
  listOffsets,
  type OffsetAnswer,
  type TopicPartition,
  tpKey,
} from './requests.js';
import { bytesSerde, type Deserializer } from './serdes.js';
import { topicPartitions } from './topic-metadata.js';
import type { ConsumerGroupMetadata } from './transactions.js';

/**
 * auto.offset.reset: where to start a partition that has no committed offset, or whose offset is out of
 * range.
 */
export type OffsetResetPolicy = 'earliest' | 'latest' | 'none';
/** isolation.level: read_committed hides records of open and aborted transactions. */
export type IsolationLevel = 'read_uncommitted' | 'read_committed';

/**
 * The consumer's settings (Kafka's consumer keys in camelCase, with Kafka's defaults) and its key and value
 * deserializers.
 */
export interface ConsumerOptions<K = Buffer | null, V = Buffer | null> extends ClientOptions {
  groupId?: string;
  groupInstanceId?: string;
  /** auto.offset.reset (default latest). */
  autoOffsetReset?: OffsetResetPolicy;
  /** isolation.level (default read_uncommitted). */
  isolationLevel?: IsolationLevel;
  fetchMinBytes?: number;
  fetchMaxBytes?: number;
  fetchMaxWaitMs?: number;
  maxPartitionFetchBytes?: number;
  maxPollRecords?: number;
  /** enable.auto.commit (default true when there is a group). */
  enableAutoCommit?: boolean;
  autoCommitIntervalMs?: number;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  maxPollIntervalMs?: number;
  /**
   * partition.assignment.strategy (default range then cooperative-sticky, as Kafka 3+): built-in names or
   * ConsumerPartitionAssignor objects (user data both ways), in order of preference.
   */
  partitionAssignmentStrategy?: (AssignorName | ConsumerPartitionAssignor)[];
  /** check.crcs (default true). */
  checkCrcs?: boolean;
  /**
   * default.api.timeout.ms (default 60000, an int of at least 0): how long a call given no timeout of its own waits
   * (position, committed, beginningOffsets, endOffsets, offsetsForTimes, commit, partitionsFor, listTopics),
   * retrying retriable failures.
   */
  defaultApiTimeoutMs?: number;
  /** Incremental fetch sessions with each leader (KIP-227; default true). */
  fetchSessions?: boolean;
  /**
   * internal.leave.group.on.close (default true): close() sends LeaveGroup for a dynamic member of a classic group,
   * so its partitions move at once. Kafka Streams sets false for its consumers: a restarting instance finds its
   * place (and its tasks) kept until session.timeout.ms instead of triggering a rebalance. The consumer protocol
   * (KIP-848) always leaves.
   */
  leaveGroupOnClose?: boolean;
  /** client.rack: the rack sent with fetches, so a broker with a replica selector can send us to our rack. */
  clientRack?: string;
  /** group.protocol: 'classic' (JoinGroup/SyncGroup, default) or 'consumer' (KIP-848). */
  groupProtocol?: 'classic' | 'consumer';
  /** group.remote.assignor for the consumer protocol (uniform, range); default the coordinator's. */
  groupRemoteAssignor?: string;
  /**
   * allow.auto.create.topics (default true, as Kafka's consumer): metadata requests for the subscribed or assigned
   * topics ask the broker to create those that do not exist, which it does when its auto.create.topics.enable is
   * on. A pattern subscription never creates topics (it asks for all of them).
   */
  allowAutoCreateTopics?: boolean;
  keyDeserializer?: Deserializer<K>;
  valueDeserializer?: Deserializer<V>;
}

/** A record as the consumer returns it: topic, partition, offset, timestamp, key, value and headers. */
export interface ConsumerRecord<K = Buffer | null, V = Buffer | null> {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: K;
  value: V;
  headers: RecordHeader[];
}

interface PartitionState {
  topic: string;
  partition: number;
  position: number | null;
  /**
   * The leader epoch that goes with the position (Kafka's FetchPosition offsetEpoch), committed with it: the
   * epoch of the batch the last consumed record came from, or the committed one the position was taken from;
   * -1 when unknown (after seek() without an epoch or a reset by auto.offset.reset).
   */
  positionEpoch: number;
  /** The partition's leader epoch in the metadata when the position was set or last checked (Kafka's currentLeader). */
  positionLeaderEpoch: number;
  /** The position must be checked with OffsetsForLeaderEpoch before it is fetched from (KIP-320). */
  awaitingValidation: boolean;
  /** An OffsetsForLeaderEpoch for the partition is in flight. */
  validating: boolean;
  /** The position must come from auto.offset.reset, not from the committed offset (Kafka's AWAIT_RESET). */
  awaitingReset: boolean;
  /**
   * The strategy of a reset that seekToBeginning() or seekToEnd() asked for, resolved at the next poll() or
   * position() (Kafka's requestOffsetReset(partition, strategy)); null to reset by auto.offset.reset.
   */
  resetTo: 'earliest' | 'latest' | null;
  paused: boolean;
  /**
   * Newly assigned to a group member whose onPartitionsAssigned callback still runs: not fetched until it ends, so
   * a seek there decides where reading starts (Kafka's SubscriptionState pendingOnAssignedCallback).
   */
  awaitingCallback: boolean;
  /**
   * Being revoked from a group member: the commit before the revocation and onPartitionsRevoked run, so it is not
   * fetched, as its records would reach no poll() (Kafka's SubscriptionState pendingRevocation).
   */
  pendingRevocation: boolean;
  /** Fetched records not yet returned, oldest first; each chunk knows the offset after it. */
  chunks: Chunk[];
  epoch: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** A retriable fetch error: do not fetch before this time. */
  backoffUntil: number;
  /** A stale leader seen: do not fetch before the cluster's metadataVersion reaches this (a refresh after it). */
  metadataVersionNeeded: number;
  /** The broker the leader sent us to (KIP-392), NO_READ_REPLICA for the leader. */
  readReplica: number;
  /** When readReplica lapses and the leader is asked again (now + metadata.max.age.ms when it was set). */
  readReplicaUntilMs: number;
}

const NO_READ_REPLICA = -1;

interface Chunk {
  records: FetchedRecords;
  /** The offset after the chunk's last batch (past trailing control batches). */
  next: number;
  /** The leader epoch of the chunk's last batch, which the position takes when it moves to `next`. */
  nextEpoch: number;
}

/** A committed offset as OffsetFetch returns it; offset -1 when the group has none. */
interface CommittedOffset {
  offset: number;
  leaderEpoch: number;
  metadata: string;
}

/**
 * A partition's committed offset as Kafka's committed() returns it (OffsetAndMetadata): the offset, the leader epoch
 * committed with it (-1 when none) and the metadata string committed with it.
 */
export interface CommittedOffsetAndMetadata {
  offset: number;
  leaderEpoch: number;
  metadata: string;
}

/** An offset to commit (Kafka's OffsetAndMetadata): a negative or missing leaderEpoch commits none (-1). */
export interface OffsetToCommit extends TopicPartition {
  offset: number;
  metadata?: string;
  leaderEpoch?: number;
}

/** Fetched chunks a partition may hold before it is fetched again: one being read and one ready. */
const PREFETCH_CHUNKS = 2;
/** How long one step of a poll waits for a rebalance in flight while the consumer still owns partitions. */
const REBALANCE_WAIT_SLICE_MS = 100;
/** Kafka's default default.api.timeout.ms: how long a call without a timeout of its own waits. */
const DEFAULT_API_TIMEOUT_MS = 60_000;
/** Kafka's close() timeout (DEFAULT_CLOSE_TIMEOUT_MS): close() without timeoutMs takes at most this long. */
const CLOSE_TIMEOUT_MS = 30_000;
/** How often the committed-offset lookup of a position resolution (started by poll() or position()) retries. */
const COMMITTED_LOOKUP_RETRIES = 20;
/** OffsetFetch v9 names the KIP-848 member and its epoch (the one group per request kept from v8). */
const OFFSET_FETCH_MEMBER_VERSION = 9;

/** How an offset commit retries (see Consumer.commitOffsets). */
interface CommitAttempts {
  beforeRevocation?: boolean;
  retries?: number;
  deadlineMs?: number;
}

/** A position found truncated under auto.offset.reset=none, with where its log diverges when the leader knows. */
interface Truncation {
  s: PartitionState;
  offset: number;
  divergent: OffsetWithEpoch | undefined;
}

function truncationError(truncations: Truncation[]): LogTruncationError {
  const fetchOffsets = new Map<string, number>();
  const divergent = new Map<string, OffsetWithEpoch>();
  for (const t of truncations) {
    const key = `${t.s.topic}-${t.s.partition}`;
    fetchOffsets.set(key, t.offset);
    if (t.divergent !== undefined) divergent.set(key, t.divergent);
  }
  return new LogTruncationError(fetchOffsets, divergent);
}

function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  list.push(value);
}

/** Fetch v13 (KIP-516) names topics by id; v12 is the last by name, for a fetch of a topic without an id. */
const FIRST_FETCH_VERSION_BY_ID = 13;
const LAST_FETCH_VERSION_BY_NAME = 12;

/** A partition as one fetch asks for it: what the answer is checked against, and the topic id it went with. */
interface SentPartition {
  s: PartitionState;
  /** The partition's epoch (seeks, pauses) when the fetch left: an answer to an older one is dropped. */
  epoch: number;
  offset: number;
  /** The topic's id in the metadata when the fetch left (ZERO_UUID when none). */
  topicId: string;
  leaderEpoch: number;
  fromReplica: number;
}

function wantedOf(x: SentPartition): WantedPartition {
  return {
    topic: x.s.topic,
    partition: x.s.partition,
    topicId: x.topicId,
    offset: x.offset,
    currentLeaderEpoch: x.leaderEpoch,
  };
}

/** What is wrong with the partitions a fetch without a session got back (each is a full fetch), or null. */
function sessionlessProblem(
  wanted: WantedPartition[],
  answered: string[],
  throttleTimeMs: number,
): string | null {
  const requested = new Map(wanted.map((w) => [tpKey(w.topic, w.partition), w]));
  return responsePartitionsProblem(true, requested, answered, throttleTimeMs);
}

/** Where the next fetch of a partition starts: after what is buffered, else at the position. */
function fetchOffsetOf(s: PartitionState): number | null {
  return s.chunks.length > 0 ? s.chunks[s.chunks.length - 1]!.next : s.position;
}

export interface EachBatchPayload<K, V> {
  topic: string;
  partition: number;
  records: ConsumerRecord<K, V>[];
  highWatermark: number;
}

/** Callbacks for Consumer.run(): one record or one batch at a time. */
export interface RunOptions<K, V> {
  eachRecord?: (record: ConsumerRecord<K, V>) => Promise<void> | void;
  eachBatch?: (batch: EachBatchPayload<K, V>) => Promise<void> | void;
}

/**
 * Kafka's consumer: assign or subscribe (with a group), fetch, positions and seeks, pause and resume,
 * read_committed, offset commits; read with poll(), run() or `for await`.
 */
export class Consumer<K = Buffer | null, V = Buffer | null> {
  /** The connections and metadata this consumer uses, exposed so tests and tools can reach a broker directly. */
  readonly cluster: Cluster;
  /** group.id; undefined for a consumer that assigns its partitions itself and commits nothing. */
  readonly groupId: string | undefined;
  private readonly o: Required<
    Omit<
      ConsumerOptions<K, V>,
      | keyof ClientOptions
      | 'groupId'
      | 'groupInstanceId'
      | 'keyDeserializer'
      | 'valueDeserializer'
      | 'partitionAssignmentStrategy'
      | 'groupProtocol'
      | 'groupRemoteAssignor'
      | 'allowAutoCreateTopics'
    >
  >;
  private readonly keyDeserializer: Deserializer<K>;
  private readonly valueDeserializer: Deserializer<V>;
  private readonly partitions = new Map<string, PartitionState>();
  private readonly fetching = new Set<number>();
  /** Each Fetch in flight by broker, settled (never rejected) once its answer is handled. */
  private readonly fetchesInFlight = new Map<number, Promise<void>>();
  /** Bytes of fetched chunks not yet handed out, as counted by the last startFetches(). */
  private buffered = 0;
  /** Fetch sessions by broker (KIP-227), unless fetchSessions is off. */
  readonly sessions = new Map<number, FetchSession>();
  private dataWaiters: (() => void)[] = [];
  private fetchError: Error | null = null;
  /** Errors of position validation (truncation, a refused OffsetsForLeaderEpoch), which position() throws too. */
  private readonly validationErrors = new WeakSet<Error>();
  /** Failures of a reset's ListOffsets (not of the committed-offset lookup), which a later call may be given. */
  private readonly resetFailures = new WeakSet<Error>();
  private closed = false;
  private running = false;
  /** The KIP-848 member's interval auto-commit (the classic protocol's auto-commit is made in poll() instead). */
  private autoCommitTimer: NodeJS.Timeout | null = null;
  /**
   * When the next auto-commit is due (Kafka's ConsumerCoordinator nextAutoCommitTimer): made by poll() under the
   * classic protocol, by autoCommitTimer under KIP-848.
   */
  private nextAutoCommitMs: number;
  /** close() has begun: no interval auto-commit starts any more (close() makes its own). */
  private closing = false;
  /** A KIP-848 interval auto-commit is waiting for its answer. */
  private autoCommitInFlight = false;
  private group: GroupMember | ConsumerProtocolMember | null = null;
  /**
   * The applied generation of the last classic-protocol subscription, kept by unsubscribe() for groupMetadata():
   * Kafka's ConsumerCoordinator outlives subscriptions and changes its groupMetadata in onJoinComplete only.
   */
  private previousGeneration: GenerationInfo | null = null;
  private coordinatorId = -1;
  /** The position resolution in flight (resolveMissingPositions) and how many callers wait for it, or null. */
  private resolving: { done: Promise<void>; waiters: number } | null = null;
  /**
   * A reset's ListOffsets failure that no caller was waiting for when it came (it outlasted their timeouts): the next
   * poll() or position() that needs a position throws it, once, as Kafka's cachedResetPositionsException.
   */
  private unreportedResolutionError: Error | null = null;
  private readonly options: ConsumerOptions<K, V>;

  constructor(options: ConsumerOptions<K, V>) {
    this.options = options;
    this.cluster = new Cluster({
      ...options,
      clientId: consumerClientId(options.clientId, options.groupId, options.groupInstanceId),
    });
    this.cluster.allowAutoTopicCreation = options.allowAutoCreateTopics ?? true;
    this.groupId = options.groupId;
    this.o = {
      autoOffsetReset: options.autoOffsetReset ?? 'latest',
      isolationLevel: options.isolationLevel ?? 'read_uncommitted',
      fetchMinBytes: options.fetchMinBytes ?? 1,
      fetchMaxBytes: options.fetchMaxBytes ?? 52_428_800,
      fetchMaxWaitMs: options.fetchMaxWaitMs ?? 500,
      maxPartitionFetchBytes: options.maxPartitionFetchBytes ?? 1_048_576,
      maxPollRecords: options.maxPollRecords ?? 500,
      enableAutoCommit: options.enableAutoCommit ?? options.groupId !== undefined,
      autoCommitIntervalMs: options.autoCommitIntervalMs ?? 5000,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 45_000,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 3000,
      maxPollIntervalMs: options.maxPollIntervalMs ?? 300_000,
      checkCrcs: options.checkCrcs ?? true,
      defaultApiTimeoutMs: checkDefaultApiTimeoutMs(options.defaultApiTimeoutMs ?? DEFAULT_API_TIMEOUT_MS),
      fetchSessions: options.fetchSessions ?? true,
      leaveGroupOnClose: options.leaveGroupOnClose ?? true,
      clientRack: options.clientRack ?? '',
    };
    if (!['earliest', 'latest', 'none'].includes(this.o.autoOffsetReset)) {
      throw new ConfigError(
        `auto.offset.reset must be earliest, latest or none, not ${this.o.autoOffsetReset}`,
      );
    }
    this.keyDeserializer = options.keyDeserializer ?? (bytesSerde as unknown as Deserializer<K>);
    this.valueDeserializer = options.valueDeserializer ?? (bytesSerde as unknown as Deserializer<V>);
    this.nextAutoCommitMs = Date.now() + this.o.autoCommitIntervalMs;
  }

  private checkOpen(): void {
    if (this.closed) throw new ClientStateError('the consumer is closed');
  }

  // ---- assignment -------------------------------------------------------------------------------------------

  /** Takes these partitions by hand (no group rebalancing). Replaces any previous manual assignment. */
  assign(tps: TopicPartition[]): void {
    this.checkOpen();
    if (this.group !== null) throw new ClientStateError('assign() cannot follow subscribe()');
    // As Kafka's assign(): partitions this call drops have no rebalance to commit them, so a due auto-commit goes now.
    this.maybeAutoCommit();
    this.setAssignment(tps);
  }

  /**
   * Used by assign() and by the group after a rebalance (`awaitingCallback`: the partitions it adds are held back
   * from fetching until the group's onPartitionsAssigned callback has run).
   */
  setAssignment(tps: TopicPartition[], awaitingCallback = false): void {
    const wanted = new Set(tps.map((tp) => tpKey(tp.topic, tp.partition)));
    for (const [k, s] of this.partitions) {
      if (!wanted.has(k)) {
        s.epoch++;
        this.partitions.delete(k);
      }
    }
    for (const tp of tps) {
      const k = tpKey(tp.topic, tp.partition);
      const kept = this.partitions.get(k);
      if (kept !== undefined) {
        // Still assigned: a revocation that failed before this assignment kept it did not take it away.
        kept.pendingRevocation = false;
        continue;
      }
      this.partitions.set(k, {
        topic: tp.topic,
        partition: tp.partition,
        position: null,
        positionEpoch: -1,
        positionLeaderEpoch: -1,
        awaitingValidation: false,
        validating: false,
        awaitingReset: false,
        resetTo: null,
        paused: false,
        awaitingCallback,
        pendingRevocation: false,
        chunks: [],
        epoch: 0,
        highWatermark: -1,
        lastStableOffset: -1,
        logStartOffset: -1,
        backoffUntil: 0,
        metadataVersionNeeded: 0,
        readReplica: NO_READ_REPLICA,
        readReplicaUntilMs: 0,
      });
    }
    this.cluster.addTopics(tps.map((tp) => tp.topic));
    this.wake();
  }

  /**
   * The group metadata a transactional producer's sendOffsetsToTransaction() takes (KafkaConsumer.groupMetadata):
   * the group id, and the generation, member id and group instance id of the assignment this consumer works with
   * (generation -1 and no member id when not in a group yet, or for assign() with a group id: then the commit is
   * not fenced by member). With the classic protocol that is the generation of the last rebalance whose
   * assignment a poll applied, not one still completing (see GroupMembership.completedGeneration), and still that
   * one after unsubscribe().
   */
  groupMetadata(): ConsumerGroupMetadata {
    if (this.groupId === undefined) throw new ClientStateError('groupMetadata() needs a groupId');
    const g = this.appliedGeneration() ?? {
      generationId: -1,
      memberId: '',
      groupInstanceId: this.options.groupInstanceId ?? null,
    };
    return { groupId: this.groupId, ...g };
  }

  /**
   * The classic protocol's last applied generation, kept across unsubscribe() and a new subscribe() until that
   * one's first assignment is applied, as KafkaConsumer.groupMetadata(): leaving the group resets the
   * coordinator's generation but not its groupMetadata, so a transactional offset commit made with it after
   * unsubscribe() is fenced (UNKNOWN_MEMBER_ID) instead of committed unchecked by a member that left.
   */
  private appliedGeneration(): GenerationInfo | undefined {
    if (this.group instanceof GroupMember) {
      const applied = this.group.completedGeneration();
      return applied.generationId >= 0 ? applied : (this.previousGeneration ?? applied);
    }
    if (this.group instanceof ConsumerProtocolMember) return this.group.lastMemberEpoch();
    return this.previousGeneration ?? undefined;
  }

  /**
   * Asks for a rebalance of the whole group at the next poll (KafkaConsumer.enforceRebalance): an assignor whose
   * plan needs another round (Kafka Streams' probing or follow-up rebalances) calls it. The KIP-848 protocol has
   * no client-side rebalances; there it does nothing, as in Kafka's new consumer. `reason` goes to the coordinator
   * in the JoinGroup (KIP-800; default 'rebalance enforced by user', as Kafka's).
   */
  enforceRebalance(reason?: string): void {
    if (this.group === null) throw new ClientStateError('enforceRebalance() needs a subscription');
    if (this.group instanceof GroupMember) this.group.requestRejoin(reason || undefined);
  }

  /** The partitions this consumer fetches now: its group's assignment, or what assign() gave it. */
  assignment(): TopicPartition[] {
    return [...this.partitions.values()].map((s) => ({ topic: s.topic, partition: s.partition }));
  }

  /**
   * Joins the consumer group (group.id required) and consumes the partitions the group assigns. `topics` may be a
   * list or a pattern matched against the cluster's topics. Called again, as Kafka's: `listener` replaces the
   * previous one (none given leaves none), and only topics other than those joined with cause a rebalance.
   */
  subscribe(topics: string[] | RegExp, listener?: RebalanceListener): void {
    this.checkOpen();
    if (this.groupId === undefined) throw new ClientStateError('subscribe() needs a groupId');
    if (this.partitions.size > 0 && this.group === null)
      throw new ClientStateError('subscribe() cannot follow assign()');
    if (this.group !== null) {
      this.group.setSubscription(topics, listener);
      return;
    }
    const hooks = {
      owned: () => this.assignment(),
      assign: (tps: TopicPartition[]) => this.setAssignment(tps, true),
      assignedCallbackDone: (tps: TopicPartition[]) => {
        for (const tp of tps) {
          const s = this.partitions.get(tpKey(tp.topic, tp.partition));
          if (s !== undefined) s.awaitingCallback = false;
        }
        this.wake();
      },
      // The positions were committed before (commitBeforeJoin, commitBeforeReconciliation): Kafka's revocation
      // itself commits nothing.
      beforeRevoke: async (tps: TopicPartition[]) => this.markPendingRevocation(tps),
      commitBeforeJoin: (deadlineMs: number, eager: boolean) => this.autoCommitBeforeJoin(deadlineMs, eager),
      commitBeforeReconciliation: (deadlineMs: number) => this.autoCommitBeforeReconciliation(deadlineMs),
      restartAutoCommitInterval: () => this.restartAutoCommitInterval(),
    };
    this.group =
      this.options.groupProtocol === 'consumer'
        ? new ConsumerProtocolMember({
            cluster: this.cluster,
            groupId: this.groupId,
            groupInstanceId: this.options.groupInstanceId ?? null,
            rebalanceTimeoutMs: this.o.maxPollIntervalMs,
            serverAssignor: this.options.groupRemoteAssignor ?? null,
            rackId: this.o.clientRack === '' ? null : this.o.clientRack,
            topics,
            listener,
            consumer: hooks,
          })
        : new GroupMember({
            cluster: this.cluster,
            groupId: this.groupId,
            groupInstanceId: this.options.groupInstanceId ?? null,
            sessionTimeoutMs: this.o.sessionTimeoutMs,
            rebalanceTimeoutMs: this.o.maxPollIntervalMs,
            heartbeatIntervalMs: this.o.heartbeatIntervalMs,
            assignors: this.options.partitionAssignmentStrategy ?? ['range', 'cooperative-sticky'],
            topics,
            listener,
            consumer: hooks,
            clientRack: this.o.clientRack === '' ? null : this.o.clientRack,
          });
    if (this.group instanceof ConsumerProtocolMember) this.startAutoCommit();
  }

  /**
   * Leaves the group's subscription (and the group) or drops the manual assignment. No auto-commit is made here, as
   * Kafka's LegacyKafkaConsumer.unsubscribe and, for a KIP-848 member, AsyncKafkaConsumer.unsubscribe (whose
   * leaveGroup revokes without committing): the rebalance listener's onPartitionsRevoked (onPartitionsLost without a
   * generation) is where the application commits what it processed.
   */
  async unsubscribe(): Promise<void> {
    if (this.group !== null) {
      if (this.group instanceof GroupMember) {
        this.previousGeneration = this.appliedGeneration() ?? null;
        await this.group.leave('the consumer unsubscribed from all topics');
      } else {
        await this.group.leave();
      }
      this.group = null;
    }
    this.setAssignment([]);
  }

  /** The topics subscribed to (empty without a group subscription). */
  subscription(): string[] {
    return this.group?.subscribedTopics() ?? [];
  }

  // ---- positions --------------------------------------------------------------------------------------------

  private state(tp: TopicPartition): PartitionState {
    const s = this.partitions.get(tpKey(tp.topic, tp.partition));
    if (s === undefined)
      throw new ClientStateError(`${tp.topic}-${tp.partition} is not assigned to this consumer`);
    return s;
  }

  private resetFetchState(s: PartitionState): void {
    s.epoch++;
    s.chunks = [];
  }

  /**
   * The next offset poll() returns for the partition, as Kafka's position(partition, timeout): a position not known
   * yet is resolved (committed offset or auto.offset.reset), and one awaiting validation (KIP-320) is validated
   * first, so the answer is where the next fetch starts, never an offset the leader's log may have truncated. A
   * truncation found under auto.offset.reset=none throws LogTruncationError; no valid position within `timeoutMs`
   * (default.api.timeout.ms) throws RequestTimeoutError.
   */
  async position(tp: TopicPartition, timeoutMs = this.o.defaultApiTimeoutMs): Promise<number> {
    const s = this.state(tp);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.checkOpen();
      if (this.partitions.get(tpKey(s.topic, s.partition)) !== s)
        throw new ClientStateError(`${tp.topic}-${tp.partition} is no longer assigned to this consumer`);
      const err = this.fetchError;
      if (err !== null && this.validationErrors.has(err)) {
        this.fetchError = null;
        throw err;
      }
      if (s.position === null) await this.resolveMissingPositions(deadline);
      if (s.position !== null && !s.awaitingValidation) return s.position;
      this.startFetches();
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RequestTimeoutError(
          `Timeout of ${timeoutMs}ms expired before the position for partition ${tp.topic}-${tp.partition} ` +
            'could be determined',
        );
      }
      await this.waitForData(Math.min(left, 100));
    }
  }

  /** Resolves when fetched data (or a fetch error) arrives, or after `ms`, whichever comes first. */
  private waitForData(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.dataWaiters.push(done);
    });
  }

  /** A validation failure poll() and position() throw. */
  private failValidation(err: Error): void {
    this.fetchError = err;
    this.validationErrors.add(err);
  }

  /**
   * The next fetch of `tp` starts at `offset`; records already fetched past the old position are dropped. The
   * leader epoch of the record before `offset`, when given, is committed with the position (Kafka's
   * seek(partition, OffsetAndMetadata)); without it the position has no epoch, as Kafka's seek(partition, offset).
   */
  seek(tp: TopicPartition, offset: number, leaderEpoch?: number): void {
    checkCommittableOffset(offset);
    const s = this.state(tp);
    this.resetFetchState(s);
    this.placePosition(s, offset, epochOrNone(leaderEpoch));
    this.wake();
  }

  /**
   * Kafka's seekUnvalidated: a position with a leader epoch is checked with OffsetsForLeaderEpoch before it is
   * fetched from (the log may have been truncated below it since); one without an epoch is fetched from as it is.
   */
  private placePosition(s: PartitionState, offset: number, epoch: number): void {
    s.position = offset;
    s.positionEpoch = epoch;
    s.positionLeaderEpoch = this.cluster.leaderEpochOf(s.topic, s.partition);
    s.awaitingValidation = epoch >= 0;
    s.awaitingReset = false;
    s.resetTo = null;
  }

  /** Kafka's requestOffsetReset: the next position comes from auto.offset.reset, not from the committed offset. */
  private requestReset(s: PartitionState): void {
    this.resetFetchState(s);
    s.position = null;
    s.awaitingValidation = false;
    s.awaitingReset = true;
    s.resetTo = null;
  }

  /**
   * Kafka's maybeValidatePositionForCurrentLeader: when the partition's leader epoch in the metadata moved on, a
   * position that carries an epoch is checked again before the next fetch (the new leader's log may end it lower).
   */
  private noteLeaderEpoch(s: PartitionState): void {
    if (s.position === null) return;
    const current = this.cluster.leaderEpochOf(s.topic, s.partition);
    if (current < 0 || current === s.positionLeaderEpoch) return;
    s.positionLeaderEpoch = current;
    if (s.positionEpoch < 0 || s.awaitingValidation) return;
    // Records fetched under the old leader are dropped, as Kafka's fetch collector drops a partition's records
    // once it is no longer fetchable.
    this.resetFetchState(s);
    s.readReplica = NO_READ_REPLICA;
    s.awaitingValidation = true;
  }

  /**
   * Moves each partition to its log start offset, as Kafka's seekToBeginning: lazily, the offset is asked of the
   * broker at the next poll() or position(). Records already fetched are dropped at once.
   */
  async seekToBeginning(tps: TopicPartition[] = this.assignment()): Promise<void> {
    this.requestResetTo(tps, 'earliest');
  }

  /**
   * Moves each partition to its end (the high watermark, or the last stable offset under read_committed), as Kafka's
   * seekToEnd: lazily, the end as of the next poll() or position(), so records written before that are skipped.
   */
  async seekToEnd(tps: TopicPartition[] = this.assignment()): Promise<void> {
    this.requestResetTo(tps, 'latest');
  }

  /** Kafka's requestOffsetReset(partitions, strategy): every partition is checked first, then all are reset. */
  private requestResetTo(tps: TopicPartition[], strategy: 'earliest' | 'latest'): void {
    this.checkOpen();
    const states = tps.map((tp) => this.state(tp));
    for (const s of states) {
      this.requestReset(s);
      s.resetTo = strategy;
    }
    this.wake();
  }

  /**
   * For each partition, the earliest offset whose timestamp is at or after the given one (null if none). Retriable
   * failures are retried for at most `timeoutMs` (default.api.timeout.ms), then RequestTimeoutError.
   */
  async offsetsForTimes(
    query: Array<TopicPartition & { timestamp: number }>,
    timeoutMs = this.o.defaultApiTimeoutMs,
  ): Promise<Array<OffsetAnswer | null>> {
    const answers = await this.listOffsetsWithin(query, timeoutMs);
    return answers.map((a) => (a.offset < 0 ? null : a));
  }

  /** Each partition's log start offset, without moving the position; within `timeoutMs` as offsetsForTimes. */
  async beginningOffsets(
    tps: TopicPartition[],
    timeoutMs = this.o.defaultApiTimeoutMs,
  ): Promise<OffsetAnswer[]> {
    return this.listOffsetsWithin(
      tps.map((tp) => ({ ...tp, timestamp: EARLIEST_TIMESTAMP })),
      timeoutMs,
    );
  }

  /**
   * The end offsets: the high watermark, or the last stable offset under read_committed; within `timeoutMs` as
   * offsetsForTimes.
   */
  async endOffsets(tps: TopicPartition[], timeoutMs = this.o.defaultApiTimeoutMs): Promise<OffsetAnswer[]> {
    return this.listOffsetsWithin(
      tps.map((tp) => ({ ...tp, timestamp: LATEST_TIMESTAMP })),
      timeoutMs,
    );
  }

  /**
   * ListOffsets as Kafka's OffsetFetcher.fetchOffsetsByTimes: retried while retriable until `timeoutMs` has passed,
   * then a RequestTimeoutError with Kafka's message, the last failure as its cause.
   */
  private async listOffsetsWithin(
    queries: Array<TopicPartition & { timestamp: number }>,
    timeoutMs: number,
  ): Promise<OffsetAnswer[]> {
    const started = Date.now();
    const deadlineMs = started + timeoutMs;
    return listOffsets(this.cluster, queries, this.isolation(), {
      currentLeaderEpoch: true,
      deadlineMs,
    }).catch((err: unknown) => {
      if (!(err instanceof CallTimeoutError)) throw err;
      throw new RequestTimeoutError(`Failed to get offsets by times in ${Date.now() - started}ms`, {
        cause: err.cause,
      });
    });
  }

  /**
   * The partitions of `topic` (Kafka's partitionsFor): from the cached metadata when it has them, else asked of the
   * cluster for at most `timeoutMs` (default.api.timeout.ms); empty for a topic the cluster does not have.
   */
  async partitionsFor(topic: string, timeoutMs = this.o.defaultApiTimeoutMs): Promise<PartitionInfo[]> {
    this.checkOpen();
    const cached = this.cluster.snapshot.topics.get(topic);
    if (cached !== undefined && cached.errorCode === 0 && cached.partitions.length > 0)
      return cached.partitions;
    const found = await topicPartitions(this.cluster, [topic], Date.now() + timeoutMs);
    return found.get(topic) ?? [];
  }

  /** Every topic of the cluster with its partitions (Kafka's listTopics), asked within `timeoutMs`. */
  async listTopics(timeoutMs = this.o.defaultApiTimeoutMs): Promise<Map<string, PartitionInfo[]>> {
    this.checkOpen();
    return topicPartitions(this.cluster, null, Date.now() + timeoutMs);
  }

  /** Stops fetching these partitions without giving them up, so the group does not rebalance (back-pressure). */
  pause(tps: TopicPartition[]): void {
    for (const tp of tps) {
      const s = this.state(tp);
      s.paused = true;
      // Records already buffered (or in flight) are dropped and fetched again from the position after resume, so
      // none is returned while paused and none is lost or repeated. Kafka keeps them instead (FetchCollector's
      // pausedCompletedFetches); here they would count against fetch.max.bytes for as long as the pause lasts, and
      // enough paused partitions would stop the fetching of the others.
      this.resetFetchState(s);
    }
  }

  /** Fetches paused partitions again, from where they stopped. */
  resume(tps: TopicPartition[]): void {
    for (const tp of tps) this.state(tp).paused = false;
    this.wake();
  }

  /**
   * Kafka's currentLag (KIP-695): the records between the position and the end of an assigned partition (the high
   * watermark, or the last stable offset under read_committed) as of its last fetch; null while unknown.
   */
  currentLag(tp: TopicPartition): number | null {
    const s = this.partitions.get(tpKey(tp.topic, tp.partition));
    if (s === undefined || s.position === null || s.highWatermark < 0) return null;
    const end = this.isolation() === 1 ? s.lastStableOffset : s.highWatermark;
    return end < 0 ? null : Math.max(0, end - s.position);
  }

  /** The partitions paused now. */
  paused(): TopicPartition[] {
    return [...this.partitions.values()]
      .filter((s) => s.paused)
      .map((s) => ({ topic: s.topic, partition: s.partition }));
  }

  private isolation(): number {
    return this.o.isolationLevel === 'read_committed' ? 1 : 0;
  }

  /**
   * Gives every assigned partition without a position one (resolvePositions), waiting for it until `deadlineMs` at
   * most, as Kafka's poll(timeout) and position(partition, timeout) bound their updateFetchPositions with their
   * timer. One resolution is in flight at a time, shared by poll() and position(); one outlasting its caller goes on
   * and the next call waits for it (a ListOffsets nobody answers holds no poll() past its timeout, so a loop of
   * polls still sees a stop flag). Its failure goes to the callers that wait for it; a reset's ListOffsets failure
   * that comes when none waits any more is kept and thrown by the next call that needs a position (not retriable
   * ones: as Kafka's OffsetFetcherUtils, a retriable failure only means the next call asks again). The next call
   * starts again.
   */
  private async resolveMissingPositions(deadlineMs: number): Promise<void> {
    let resolving = this.resolving;
    if (resolving === null) {
      const missing = [...this.partitions.values()].filter((s) => s.position === null);
      if (missing.length === 0) return;
      const kept = this.unreportedResolutionError;
      if (kept !== null) {
        this.unreportedResolutionError = null;
        throw kept;
      }
      resolving = this.startResolution(missing);
    }
    const timedOut = new Error('the positions are still being resolved');
    resolving.waiters++;
    try {
      await settleWithin(resolving.done, deadlineMs - Date.now(), () => timedOut);
    } catch (err) {
      if (err !== timedOut) throw err;
    } finally {
      resolving.waiters--;
    }
  }

  private startResolution(missing: PartitionState[]): { done: Promise<void>; waiters: number } {
    const resolving = { done: Promise.resolve(), waiters: 0 };
    resolving.done = this.resolvePositions(missing)
      .catch((err: Error) => {
        // The callers still waiting get it from this promise; with none left it would be lost. Only a reset's
        // failure is kept, as Kafka's: its committed-offset lookup that failed is dropped when the next call asks for
        // other partitions or in another generation (ConsumerCoordinator's pendingCommittedOffsetRequest).
        if (resolving.waiters === 0 && this.resetFailures.has(err) && !isRetriableError(err) && !this.closed)
          this.unreportedResolutionError ??= err;
        throw err;
      })
      .finally(() => {
        if (this.resolving === resolving) this.resolving = null;
      });
    this.resolving = resolving;
    return resolving;
  }

  /**
   * Positions from committed offsets (with a group), else from auto.offset.reset. Only a partition the group has
   * no offset for is reset: when the committed offsets cannot be read (GROUP_AUTHORIZATION_FAILED,
   * TOPIC_AUTHORIZATION_FAILED), the error goes to the caller of poll() or position(), as Kafka's consumer throws
   * it, since starting from auto.offset.reset instead would skip records or read them again unnoticed.
   */
  private async resolvePositions(states: PartitionState[]): Promise<void> {
    let missing = states;
    // A partition whose position was found out of range or truncated is reset, not read from the committed offset
    // again (that offset is the one that failed).
    const fromCommitted = missing.filter((s) => !s.awaitingReset);
    if (this.groupId !== undefined && fromCommitted.length > 0) {
      const epochs = fromCommitted.map((s) => s.epoch);
      // Bounded by retries, not by default.api.timeout.ms: this lookup outlives the poll that started it, and Kafka's
      // poll takes up a pending one again rather than fail for a timeout of its own.
      const committed = await this.committedOffsets(fromCommitted, COMMITTED_LOOKUP_RETRIES);
      for (const [i, s] of fromCommitted.entries()) {
        const c = committed.get(tpKey(s.topic, s.partition));
        // A seek, or a seekToBeginning()/seekToEnd() asked for while the offsets were fetched, decides instead.
        if (c === undefined || c.offset < 0 || s.position !== null || s.epoch !== epochs[i]) continue;
        // As Kafka's refreshCommittedOffsets: the position takes the committed epoch too, so that committing it
        // again before consuming anything keeps the epoch the group had, and is validated with it.
        this.placePosition(s, c.offset, c.leaderEpoch);
      }
      missing = missing.filter((s) => s.position === null);
    }
    if (missing.length === 0) return;
    const policy = this.o.autoOffsetReset;
    const unresettable = missing.filter((s) => s.resetTo === null && policy === 'none');
    if (unresettable.length > 0) {
      throw new NoOffsetForPartitionError(unresettable.map((s) => `${s.topic}-${s.partition}`));
    }
    const sent = missing.map((s) => ({ s, epoch: s.epoch, strategy: s.resetTo ?? policy }));
    const answers = await listOffsets(
      this.cluster,
      sent.map(({ s, strategy }) => ({
        topic: s.topic,
        partition: s.partition,
        timestamp: strategy === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP,
      })),
      this.isolation(),
      { currentLeaderEpoch: true },
    ).catch((err: unknown) => {
      if (err instanceof Error) this.resetFailures.add(err);
      throw err;
    });
    for (let i = 0; i < sent.length; i++) {
      const { s, epoch } = sent[i]!;
      // A seek or another reset since the request was sent decides the position instead.
      if (s.position !== null || s.epoch !== epoch) continue;
      // A reset position has no epoch, as in Kafka's resetPositionIfNeeded, so it is not validated.
      this.placePosition(s, answers[i]!.offset, -1);
    }
  }

  // ---- fetching ---------------------------------------------------------------------------------------------

  /** Bytes of fetched records held for poll(), over all partitions: at most fetch.max.bytes plus one fetch. */
  get bufferedBytes(): number {
    let bytes = 0;
    for (const s of this.partitions.values()) for (const c of s.chunks) bytes += c.records.sizeInBytes;
    return bytes;
  }

  private wake(): void {
    for (const w of this.dataWaiters.splice(0)) w();
  }

  private fetchable(s: PartitionState, now: number): boolean {
    return (
      !s.paused &&
      !s.awaitingCallback &&
      !s.pendingRevocation &&
      s.position !== null &&
      !s.awaitingValidation &&
      s.chunks.length < PREFETCH_CHUNKS &&
      s.backoffUntil <= now &&
      s.metadataVersionNeeded <= this.cluster.metadataVersion &&
      this.buffered < this.o.fetchMaxBytes
    );
  }

  /**
   * The broker to fetch a partition from: the replica its leader sent us to while that holds and the broker is
   * known, else the leader (Kafka's selectReadReplica); -1 when the leader is unknown.
   */
  private fetchNodeOf(s: PartitionState, now: number): number {
    if (s.readReplica !== NO_READ_REPLICA) {
      if (now < s.readReplicaUntilMs && this.cluster.snapshot.brokers.has(s.readReplica))
        return s.readReplica;
      s.readReplica = NO_READ_REPLICA;
    }
    return this.cluster.leaderOf(s.topic, s.partition);
  }

  /** Starts a fetch at every broker (leader or read replica) with fetchable partitions and no fetch in flight. */
  private startFetches(): void {
    if (this.closed) return;
    const now = Date.now();
    this.buffered = this.bufferedBytes;
    const byNode = new Map<number, PartitionState[]>();
    const toValidate = new Map<number, PartitionState[]>();
    let unknownLeader = false;
    for (const s of this.partitions.values()) {
      this.noteLeaderEpoch(s);
      if (s.awaitingValidation && this.validatable(s, now)) {
        const leader = this.cluster.leaderOf(s.topic, s.partition);
        if (leader < 0) unknownLeader = true;
        else addTo(toValidate, leader, s);
        continue;
      }
      if (!this.fetchable(s, now)) continue;
      const node = this.fetchNodeOf(s, now);
      if (node < 0) {
        unknownLeader = true;
        continue;
      }
      if (this.fetching.has(node)) continue;
      addTo(byNode, node, s);
    }
    if (unknownLeader) this.cluster.invalidate();
    this.refreshMetadataIfDue(now);
    for (const [node, list] of byNode) this.fetchFrom(node, list);
    for (const [node, list] of toValidate) this.validatePositions(node, list);
  }

  private validatable(s: PartitionState, now: number): boolean {
    return (
      !s.validating &&
      s.position !== null &&
      s.backoffUntil <= now &&
      s.metadataVersionNeeded <= this.cluster.metadataVersion
    );
  }

  /** Sends OffsetsForLeaderEpoch for positions awaiting validation to their leader, and applies the answers. */
  private validatePositions(node: number, list: PartitionState[]): void {
    const sent = list.map((s) => ({
      s,
      epoch: s.epoch,
      position: {
        topic: s.topic,
        partition: s.partition,
        offset: s.position!,
        offsetEpoch: s.positionEpoch,
        currentLeaderEpoch: s.positionLeaderEpoch,
      },
    }));
    for (const x of sent) x.s.validating = true;
    fetchEpochEndOffsets(
      this.cluster,
      node,
      sent.map((x) => x.position),
    )
      .then(
        (res) => {
          const truncations: Truncation[] = [];
          for (const x of sent) {
            if (!this.stillValidating(x.s, x.epoch, x.position.offset)) continue;
            if (res === null) {
              x.s.awaitingValidation = false; // An old broker: Kafka skips validation too.
              continue;
            }
            const answer = res.topics
              .find((t) => t.topic === x.s.topic)
              ?.partitions.find((p) => p.partition === x.s.partition);
            if (answer === undefined) continue;
            const t = this.applyValidation(x.s, judgeEpochEndOffset(x.position, answer));
            if (t !== null) truncations.push(t);
          }
          if (truncations.length > 0) this.failValidation(truncationError(truncations));
        },
        (err: Error) => {
          for (const x of sent) this.awaitNewLeader(x.s, Date.now());
          if (!(err instanceof KafkaClientError) || !err.retriable) this.failValidation(err);
        },
      )
      .catch((err: Error) => {
        this.failValidation(err);
      })
      .finally(() => {
        for (const x of sent) x.s.validating = false;
        if (this.fetchError === null) this.startFetches();
        this.wake();
      });
  }

  /** Kafka's check that the position the answer is about is still the partition's (no seek or reset since). */
  private stillValidating(s: PartitionState, epoch: number, offset: number): boolean {
    return (
      s.awaitingValidation &&
      s.epoch === epoch &&
      s.position === offset &&
      this.partitions.get(tpKey(s.topic, s.partition)) === s
    );
  }

  /**
   * Kafka's maybeCompleteValidation: a valid position is fetched from; a truncated one moves to the first offset
   * known to diverge, or with auto.offset.reset=none stays and is reported (returned) for poll() to throw; an epoch
   * the leader does not know is reset by auto.offset.reset.
   */
  private applyValidation(s: PartitionState, outcome: ValidationOutcome): Truncation | null {
    const tp = `${s.topic}-${s.partition}`;
    const noPolicy = this.o.autoOffsetReset === 'none';
    switch (outcome.kind) {
      case 'valid':
        s.awaitingValidation = false;
        return null;
      case 'retry':
        this.awaitNewLeader(s, Date.now());
        return null;
      case 'failed':
        this.failValidation(outcome.error);
        s.backoffUntil = Date.now() + this.cluster.backoffMs(0);
        return null;
      case 'unknown-epoch':
        if (noPolicy) break;
        this.cluster.options.logger?.info(
          `Truncation detected for partition ${tp} at offset ${s.position}, resetting offset`,
        );
        this.requestReset(s);
        return null;
      case 'truncated':
        if (noPolicy) break;
        this.cluster.options.logger?.info(
          `Truncation detected for partition ${tp} at offset ${s.position}, resetting offset to the first offset ` +
            `known to diverge ${outcome.offset} (leader epoch ${outcome.leaderEpoch})`,
        );
        s.position = outcome.offset;
        s.positionEpoch = outcome.leaderEpoch;
        s.awaitingValidation = false;
        return null;
    }
    this.cluster.options.logger?.warn(
      `Truncation detected for partition ${tp} at offset ${s.position}, but no reset policy is set`,
    );
    // The position stays unvalidated: the next poll() asks again, after the backoff, and throws again.
    s.backoffUntil = Date.now() + this.cluster.backoffMs(0);
    const divergent =
      outcome.kind === 'truncated'
        ? { topic: s.topic, partition: s.partition, offset: outcome.offset, leaderEpoch: outcome.leaderEpoch }
        : undefined;
    return { s, offset: s.position!, divergent };
  }

  /** A leader seen to be stale: refresh metadata, and fetch the partition only once a newer answer is in. */
  private awaitNewLeader(s: PartitionState, now: number): void {
    this.cluster.invalidate();
    s.metadataVersionNeeded = this.cluster.metadataVersion + 1;
    s.backoffUntil = now + this.cluster.backoffMs(0);
  }

  /** Starts the metadata refresh that stale or unknown leaders (or metadata.max.age.ms) call for, if due. */
  private refreshMetadataIfDue(now: number): void {
    const refresh = this.cluster.refreshIfDue(now);
    if (refresh === null) return;
    refresh.then(
      () => {
        this.startFetches();
        this.wake();
      },
      (err: Error) => {
        // A retriable failure (no broker reachable yet) is tried again, after retry.backoff.ms, by the next call.
        if (!(err instanceof KafkaClientError) || !err.retriable) this.fetchError = err;
        this.wake();
      },
    );
  }

  private fetchFrom(node: number, list: PartitionState[]): void {
    this.fetching.add(node);
    const sent: SentPartition[] = list.map((s) => ({
      s,
      epoch: s.epoch,
      offset: fetchOffsetOf(s)!,
      topicId: this.cluster.snapshot.topics.get(s.topic)?.topicId ?? ZERO_UUID,
      // The leader epoch of the metadata, as Kafka's consumer: a broker that no longer leads in that epoch (or has
      // not yet learned of it) answers FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH and the partition waits for
      // newer metadata, instead of reading a log that may be truncated.
      leaderEpoch: this.cluster.leaderEpochOf(s.topic, s.partition),
      fromReplica: s.readReplica,
    }));
    let session: FetchSession | undefined;
    if (this.o.fetchSessions) {
      session = this.sessions.get(node);
      if (session === undefined) this.sessions.set(node, (session = new FetchSession()));
    }
    // As Kafka's consumer (AbstractFetch.createFetchRequests): the newest version both sides speak, by topic id,
    // when every topic fetched has an id in the metadata; else v12, by name.
    const wanted = sent.map(wantedOf);
    const byId = canUseTopicIds(wanted);
    const inFlight = this.cluster
      .sendForVersion<FetchResponse>(
        node,
        ApiKey.FETCH,
        (version) => this.fetchRequest(version, sent, wanted, session),
        {
          timeoutMs: this.cluster.options.requestTimeoutMs + this.o.fetchMaxWaitMs,
          maxVersion: byId ? undefined : LAST_FETCH_VERSION_BY_NAME,
        },
      )
      .then(
        ({ response: res, version }) => {
          // From v13 the response names topics by id: the ids this fetch sent tell their names (Kafka's
          // sessionTopicNames); a topic id this fetch did not send is not this consumer's to read, and spoils the
          // answer as a partition outside the session does.
          const names =
            version >= FIRST_FETCH_VERSION_BY_ID ? new Map(sent.map((x) => [x.topicId, x.s.topic])) : null;
          const topicOf = (t: FetchResponse['responses'][number]): string =>
            names === null ? t.topic : (names.get(t.topicId) ?? `unknown topic id ${t.topicId}`);
          const answered = res.responses.flatMap((t) =>
            t.partitions.map((p) => tpKey(topicOf(t), p.partitionIndex)),
          );
          // As Kafka's FetchSessionHandler.handleResponse: a top-level error, or partitions that do not match what
          // was asked, make the fetch's answer unusable; the session starts over (or the fetch goes again, without
          // sessions) and poll() does not see it, as Kafka's AbstractFetch only logs it.
          const usable =
            session !== undefined
              ? session.answered(res, answered)
              : res.errorCode === 0 && sessionlessProblem(wanted, answered, res.throttleTimeMs) === null;
          if (res.errorCode === ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR) {
            // The broker's session names topics otherwise than this fetch did (by id or by name), or saw ids it
            // cannot square: as Kafka's AbstractFetch, the metadata is refreshed too.
            this.cluster.invalidate();
          }
          if (!usable) {
            const what =
              res.errorCode !== 0 ? errorName(res.errorCode) : 'partitions other than those asked for';
            this.cluster.options.logger?.info(`Fetch from node ${node} answered ${what}: fetching again`);
            return;
          }
          for (const t of res.responses) {
            const topic = topicOf(t);
            for (const p of t.partitions) {
              const x = sent.find((y) => y.s.topic === topic && y.s.partition === p.partitionIndex);
              if (x !== undefined) this.onPartitionData(x.s, x.epoch, x.offset, x.fromReplica, p);
            }
          }
        },
        (err: Error) => {
          session?.failed();
          const now = Date.now();
          for (const x of sent) {
            // The broker may be gone or no longer lead: fetch again from the leader a refresh names. A read
            // replica that does not answer is left for the leader (Kafka's handleFetchFailure).
            this.awaitNewLeader(x.s, now);
            x.s.readReplica = NO_READ_REPLICA;
          }
          if (!(err instanceof KafkaClientError) || !err.retriable) this.fetchError = err;
        },
      )
      .catch((err: Error) => {
        this.fetchError = err;
      })
      .finally(() => {
        this.fetching.delete(node);
        this.fetchesInFlight.delete(node);
        // Prefetch: the next fetch leaves now, while the application works on what this one brought (after an
        // error, poll() reports it first and fetches again later).
        if (this.fetchError === null) this.startFetches();
        this.wake();
      });
    this.fetchesInFlight.set(node, inFlight);
  }

  /**
   * The Fetch request for these partitions (`wanted`: the same in the session's form) at `version`: the session's
   * plan (only what it must be told) when sessions are on, else all of them without a session. From v13 topics go
   * by id, before by name.
   */
  private fetchRequest(
    version: number,
    sent: SentPartition[],
    wanted: WantedPartition[],
    session: FetchSession | undefined,
  ): FetchRequest {
    const byId = version >= FIRST_FETCH_VERSION_BY_ID;
    let plan: {
      sessionId: number;
      sessionEpoch: number;
      send: SentPartition[];
      forgotten: ForgottenPartition[];
    } = {
      sessionId: 0,
      sessionEpoch: -1,
      send: sent,
      forgotten: [],
    };
    if (session !== undefined) {
      const p = session.plan(wanted, byId);
      const named = new Set(p.send.map((w) => tpKey(w.topic, w.partition)));
      plan = { ...p, send: sent.filter((x) => named.has(tpKey(x.s.topic, x.s.partition))) };
    }
    // A topic forgotten under an old id and fetched under a new one is two entries by id.
    const forgotten = new Map<string, { topic: string; topicId: string; partitions: number[] }>();
    for (const f of plan.forgotten) {
      const k = byId ? f.topicId : f.topic;
      let t = forgotten.get(k);
      if (t === undefined) forgotten.set(k, (t = { topic: f.topic, topicId: f.topicId, partitions: [] }));
      t.partitions.push(f.partition);
    }
    const topics = new Map<string, SentPartition[]>();
    for (const x of plan.send) {
      let t = topics.get(x.s.topic);
      if (t === undefined) topics.set(x.s.topic, (t = []));
      t.push(x);
    }
    return {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: this.o.fetchMaxWaitMs,
      minBytes: this.o.fetchMinBytes,
      maxBytes: this.o.fetchMaxBytes,
      isolationLevel: this.isolation(),
      sessionId: plan.sessionId,
      sessionEpoch: plan.sessionEpoch,
      topics: [...topics].map(([topic, xs]) => ({
        topic,
        topicId: xs[0]!.topicId,
        partitions: xs.map((x) => ({
          partition: x.s.partition,
          currentLeaderEpoch: x.leaderEpoch,
          fetchOffset: BigInt(x.offset),
          lastFetchedEpoch: -1,
          logStartOffset: -1n,
          partitionMaxBytes: this.o.maxPartitionFetchBytes,
          replicaDirectoryId: ZERO_UUID,
        })),
      })),
      forgottenTopicsData: [...forgotten.values()],
      rackId: this.o.clientRack,
    };
  }

  private onPartitionData(
    s: PartitionState,
    epoch: number,
    offset: number,
    fromReplica: number,
    p: FetchResponsePartitionData,
  ): void {
    if (
      s.epoch !== epoch ||
      fetchOffsetOf(s) !== offset ||
      this.partitions.get(tpKey(s.topic, s.partition)) !== s
    ) {
      return;
    }
    if (p.errorCode !== 0) {
      // Any error from a read replica sends the partition back to its leader; out of range there means only that
      // the replica is behind, so the position stays (Kafka's clearPreferredReadReplica).
      s.readReplica = NO_READ_REPLICA;
      if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && fromReplica !== NO_READ_REPLICA) return;
      if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
        // As Kafka's FetchCollector: the position stays under auto.offset.reset=none (poll() throws, the next one
        // fetches and throws again until a seek), and is reset by the policy otherwise.
        const tp = `${s.topic}-${s.partition}`;
        const message = `Fetch position ${offset} is out of range for partition ${tp}`;
        if (this.o.autoOffsetReset === 'none') {
          this.cluster.options.logger?.info(
            `${message}, raising error to the application since no reset policy is configured`,
          );
          this.fetchError = new OffsetOutOfRangeError(message, new Map([[tp, offset]]));
        } else {
          this.cluster.options.logger?.info(`${message}, resetting offset`);
          this.requestReset(s);
        }
        return;
      }
      const err = new KafkaProtocolError(p.errorCode, `Fetch ${s.topic}-${s.partition}`);
      if (!err.retriable) {
        this.fetchError = err;
        return;
      }
      // Retriable partition errors mostly say the leadership moved (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
      // UNKNOWN_TOPIC_OR_PARTITION on a broker that dropped its copy, ...): ask for the leader again.
      this.awaitNewLeader(s, Date.now());
      return;
    }
    s.highWatermark = Number(p.highWatermark);
    s.lastStableOffset = Number(p.lastStableOffset);
    s.logStartOffset = Number(p.logStartOffset);
    if (p.preferredReadReplica >= 0) {
      s.readReplica = p.preferredReadReplica;
      s.readReplicaUntilMs = Date.now() + this.cluster.options.metadataMaxAgeMs;
    }
    if (p.records === null || p.records.length === 0) return;
    const records = new FetchedRecords(
      p.records,
      offset,
      p.abortedTransactions,
      this.isolation() === 1,
      this.o.checkCrcs,
    );
    if (records.done) {
      // Only control batches or aborted data: move past them.
      const last = s.chunks[s.chunks.length - 1];
      if (last !== undefined) {
        last.next = records.nextOffset;
        last.nextEpoch = records.nextOffsetEpoch;
      } else {
        s.position = records.nextOffset;
        s.positionEpoch = records.nextOffsetEpoch;
      }
      return;
    }
    this.buffered += records.sizeInBytes;
    s.chunks.push({ records, next: records.nextOffset, nextEpoch: records.nextOffsetEpoch });
  }

  /**
   * Returns the records available now, or waits up to timeoutMs for some. Positions move past what is returned.
   */
  async poll(timeoutMs = 1000): Promise<ConsumerRecord<K, V>[]> {
    this.checkOpen();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // A rebalance whose JoinGroup the coordinator holds is waited for until the poll's timeout, not longer,
      // as Kafka's poll; a later poll waits for the same join and runs the listener. Partitions still owned
      // meanwhile (the cooperative protocol keeps them) are fetched and returned, in slices of the wait.
      if (this.group !== null) {
        const owned = this.partitions.size > 0;
        try {
          await this.group.ensureActive(
            owned ? Math.min(deadline, Date.now() + REBALANCE_WAIT_SLICE_MS) : deadline,
          );
        } catch (err) {
          await this.resolvePositionsAwaitingCallback();
          throw err;
        }
        this.group.polled();
      }
      // Before this poll's records are taken: what the previous polls returned counts as processed.
      this.maybeAutoCommit();
      const err = this.fetchError;
      if (err !== null) {
        this.fetchError = null;
        throw err;
      }
      // A partition whose onPartitionsAssigned has not succeeded gets a position too (it is only not fetched).
      await this.resolveMissingPositions(deadline);
      const records = this.drainBuffers();
      if (records.length > 0) {
        this.startFetches();
        return records;
      }
      this.startFetches();
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return [];
      await this.waitForData(Math.min(left, this.partitions.size === 0 ? left : 100));
    }
  }

  /**
   * A KIP-848 onPartitionsAssigned failed (and poll() throws its error): the partitions it was given stay assigned,
   * unfetched, and get their positions anyway, as Kafka 3.9's poll initializes every assigned partition without one
   * (SubscriptionState.initializingPartitions does not skip those awaiting the callback). A failure here is left for
   * the next poll or position() to meet; the callback's error is the one thrown.
   */
  private async resolvePositionsAwaitingCallback(): Promise<void> {
    const waiting = [...this.partitions.values()].filter((s) => s.awaitingCallback && s.position === null);
    if (waiting.length > 0) await this.resolvePositions(waiting).catch(() => {});
  }

  private drainBuffers(): ConsumerRecord<K, V>[] {
    const out: ConsumerRecord<K, V>[] = [];
    for (const s of this.partitions.values()) {
      if (s.paused || s.pendingRevocation || s.chunks.length === 0) continue;
      const make = this.recordFactory(s);
      while (s.chunks.length > 0 && out.length < this.o.maxPollRecords) {
        const c = s.chunks[0]!;
        c.records.take(this.o.maxPollRecords - out.length, out, make);
        if (c.records.done) {
          s.position = c.next;
          s.positionEpoch = c.nextEpoch;
          s.chunks.shift();
        } else {
          s.position = c.records.lastTakenOffset + 1;
          s.positionEpoch = c.records.lastTakenEpoch;
        }
      }
      if (out.length >= this.o.maxPollRecords) break;
    }
    return out;
  }

  /** Makes the partition's records as poll() returns them: deserialized, with topic and partition. */
  private recordFactory(s: PartitionState): RecordFactory<ConsumerRecord<K, V>> {
    const { topic, partition } = s;
    const keys = this.keyDeserializer;
    const values = this.valueDeserializer;
    return (offset, timestamp, key, value, headers) => ({
      topic,
      partition,
      offset,
      timestamp,
      key: keys.deserialize(key, topic),
      value: values.deserialize(value, topic),
      headers,
    });
  }

  /**
   * Iterates records until close() or stop(); positions advance as records are handed out. `break` in a
   * `for await` ends the iteration (the consumer stays subscribed; close() it when done).
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<ConsumerRecord<K, V>> {
    return new RecordIterator<ConsumerRecord<K, V>>({
      start: () => {
        this.running = true;
      },
      running: () => this.running,
      poll: async () => {
        while (this.running && !this.closed) {
          const records = await this.poll(500);
          if (records.length > 0) return records;
        }
        return null;
      },
    });
  }

  /**
   * Calls eachRecord for every record (or eachBatch per partition's slice of a poll) until stop() or close().
   * A handler that throws stops the loop and rejects the promise; positions stay at the failed record's batch.
   */
  async run(handlers: RunOptions<K, V>): Promise<void> {
    if (handlers.eachRecord === undefined && handlers.eachBatch === undefined) {
      throw new TypeError('run() needs eachRecord or eachBatch');
    }
    this.running = true;
    while (this.running && !this.closed) {
      const records = await this.poll(500);
      if (records.length === 0) continue;
      if (handlers.eachBatch !== undefined) {
        const groups = new Map<string, ConsumerRecord<K, V>[]>();
        for (const r of records) {
          const k = tpKey(r.topic, r.partition);
          let g = groups.get(k);
          if (g === undefined) groups.set(k, (g = []));
          g.push(r);
        }
        for (const g of groups.values()) {
          const s = this.partitions.get(tpKey(g[0]!.topic, g[0]!.partition));
          await handlers.eachBatch({
            topic: g[0]!.topic,
            partition: g[0]!.partition,
            records: g,
            highWatermark: s?.highWatermark ?? -1,
          });
        }
      } else {
        for (const r of records) await handlers.eachRecord!(r);
      }
    }
  }

  /** Ends the iterator or run() loop after the current record. */
  stop(): void {
    this.running = false;
    this.wake();
  }

  // ---- offsets in the group -----------------------------------------------------------------------------------

  private async coordinator(): Promise<number> {
    if (this.groupId === undefined) throw new ClientStateError('committing offsets needs a groupId');
    if (this.coordinatorId < 0) this.coordinatorId = await findCoordinator(this.cluster, this.groupId);
    return this.coordinatorId;
  }

  /**
   * The group's committed offsets for these partitions, keyed by tpKey(topic, partition): the offset, or null for a
   * partition the group has no offset for (the key is there), as the values of Kafka's committed(partitions) map.
   */
  async committed(
    tps: TopicPartition[],
    timeoutMs = this.o.defaultApiTimeoutMs,
  ): Promise<Map<string, number | null>> {
    const committed = await this.committedOffsetsWithin(tps, timeoutMs);
    return new Map([...committed].map(([k, c]) => [k, c.offset < 0 ? null : c.offset]));
  }

  /**
   * Kafka's committed(partitions): each partition's committed offset with the leader epoch and the metadata
   * committed with it, keyed by tpKey(topic, partition); null for a partition the group has no offset for.
   */
  async committedWithMetadata(
    tps: TopicPartition[],
    timeoutMs = this.o.defaultApiTimeoutMs,
  ): Promise<Map<string, CommittedOffsetAndMetadata | null>> {
    const committed = await this.committedOffsetsWithin(tps, timeoutMs);
    return new Map([...committed].map(([k, c]) => [k, c.offset < 0 ? null : { ...c }]));
  }

  /**
   * committedOffsets for committed(): at most `timeoutMs` (default.api.timeout.ms), then RequestTimeoutError with
   * Kafka's message (ClassicKafkaConsumer.committed), the last failure as its cause.
   */
  private async committedOffsetsWithin(
    tps: TopicPartition[],
    timeoutMs: number,
  ): Promise<Map<string, CommittedOffset>> {
    return this.committedOffsets(tps, Number.POSITIVE_INFINITY, Date.now() + timeoutMs).catch(
      (err: unknown) => {
        if (!(err instanceof CallTimeoutError)) throw err;
        throw new RequestTimeoutError(
          `Timeout of ${timeoutMs}ms expired before the last committed offset for partitions ` +
            `[${tps.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}] could be determined. Try tuning ` +
            'default.api.timeout.ms larger to relax the threshold.',
          { cause: err.cause },
        );
      },
    );
  }

  /**
   * The committed offsets of the group for these partitions, with their leader epochs; retriable failures are
   * retried `retries` times and until `deadlineMs` (CallTimeoutError then).
   */
  private async committedOffsets(
    tps: TopicPartition[],
    retries: number,
    deadlineMs = Number.POSITIVE_INFINITY,
  ): Promise<Map<string, CommittedOffset>> {
    return this.cluster.withRetry(
      async () => {
        const coordinator = await this.coordinator();
        const topics = new Map<string, number[]>();
        for (const tp of tps) {
          let t = topics.get(tp.topic);
          if (t === undefined) topics.set(tp.topic, (t = []));
          t.push(tp.partition);
        }
        const named = [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
        const member = await this.offsetFetchMember(coordinator).catch((err: unknown) => {
          this.coordinatorId = -1;
          throw err;
        });
        const res = await this.cluster
          .send<OffsetFetchResponse>(
            coordinator,
            ApiKey.OFFSET_FETCH,
            {
              groupId: this.groupId!,
              topics: named,
              groups:
                member === null
                  ? []
                  : [
                      {
                        groupId: this.groupId!,
                        memberId: member.memberId,
                        memberEpoch: member.epoch,
                        topics: named,
                      },
                    ],
              requireStable: true,
            },
            member === null ? undefined : { version: OFFSET_FETCH_MEMBER_VERSION },
          )
          .catch((err: unknown) => {
            this.coordinatorId = -1;
            throw err;
          });
        // v8+ answers per group: this request asked for one.
        const answer = member === null ? res : (res.groups[0] ?? { errorCode: 0, topics: [] });
        this.checkCoordinatorError(answer.errorCode);
        const out = new Map<string, CommittedOffset>();
        for (const t of answer.topics) {
          for (const p of t.partitions) {
            this.checkCoordinatorError(p.errorCode);
            out.set(tpKey(t.name, p.partitionIndex), {
              offset: Number(p.committedOffset),
              leaderEpoch: epochOrNone(p.committedLeaderEpoch),
              metadata: p.metadata ?? '',
            });
          }
        }
        return out;
      },
      retries,
      deadlineMs,
    );
  }

  /**
   * The member an OffsetFetch names, as Kafka's CommitRequestManager: a KIP-848 member with an epoch from the
   * coordinator (above 0) sends its id and epoch (v9), so that the coordinator refuses a fetch from a member it has
   * fenced (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); null otherwise, or when the coordinator has no v9 (then v7).
   */
  private async offsetFetchMember(coordinator: number): Promise<{ memberId: string; epoch: number } | null> {
    if (!(this.group instanceof ConsumerProtocolMember)) return null;
    const { generationId, memberId } = this.group.generation();
    if (generationId <= 0) return null;
    const range = (await this.cluster.connection(coordinator)).versionRange(ApiKey.OFFSET_FETCH);
    if (range === undefined || range.max < OFFSET_FETCH_MEMBER_VERSION) return null;
    return { memberId, epoch: generationId };
  }

  private checkCoordinatorError(code: number): void {
    if (code === 0) return;
    if (code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_NOT_AVAILABLE)
      this.coordinatorId = -1;
    throw new KafkaProtocolError(code);
  }

  /**
   * Commits the current positions of these partitions (default: all assigned with a position), each with its
   * leader epoch, as Kafka's SubscriptionState.allConsumed.
   */
  private async commitPositions(tps: TopicPartition[], how: CommitAttempts = {}): Promise<void> {
    const offsets: OffsetToCommit[] = [];
    for (const tp of tps) {
      const s = this.partitions.get(tpKey(tp.topic, tp.partition));
      if (s !== undefined && s.position !== null)
        offsets.push({ ...tp, offset: s.position, leaderEpoch: s.positionEpoch });
    }
    if (offsets.length > 0) await this.commitOffsets(offsets, how);
  }

  /**
   * Commits offsets (the next offset to read, as Kafka defines it), each with the leader epoch of the record
   * before it when given (Kafka's OffsetAndMetadata), which the group keeps so that a consumer resuming there can
   * tell whether the log was truncated. Without offsets, commits the position of every assigned partition with the
   * epoch of the last record consumed there. As Kafka's commitSync, retriable failures are retried for at most
   * `timeoutMs` (default.api.timeout.ms), then RequestTimeoutError.
   */
  async commit(offsets?: OffsetToCommit[], timeoutMs = this.o.defaultApiTimeoutMs): Promise<void> {
    this.checkOpen();
    const how = { retries: Number.POSITIVE_INFINITY, deadlineMs: Date.now() + timeoutMs };
    const committing =
      offsets === undefined ? this.commitPositions(this.assignment(), how) : this.commitOffsets(offsets, how);
    await committing.catch((err: unknown) => {
      if (!(err instanceof CallTimeoutError)) throw err;
      throw new RequestTimeoutError(
        `Timeout of ${timeoutMs}ms expired before successfully committing offsets`,
        {
          cause: err.cause,
        },
      );
    });
  }

  /**
   * commit() with offsets. `beforeRevocation`: the auto-commit of partitions a KIP-848 member is about to give up,
   * which, as Kafka's CommitRequestManager.maybeAutoCommitSyncBeforeRevocation, is retried with the member's latest
   * epoch when the coordinator answers STALE_MEMBER_EPOCH (the epoch moved on during the reconciliation), so the
   * positions reach the group before another member takes the partitions. `retries` and `deadlineMs` bound the
   * retries of retriable failures (default: 10, no deadline).
   */
  private async commitOffsets(offsets: OffsetToCommit[], how: CommitAttempts = {}): Promise<void> {
    const { beforeRevocation = false, retries = 10, deadlineMs = Number.POSITIVE_INFINITY } = how;
    // As Kafka's consumer: nothing to commit sends nothing, and an offset that cannot be one is refused before
    // anything is sent (OffsetAndMetadata's "Invalid negative offset").
    for (const o of offsets) checkCommittableOffset(o.offset);
    if (offsets.length === 0) return;
    this.checkActiveGeneration();
    const retryStaleEpoch = beforeRevocation && this.group instanceof ConsumerProtocolMember;
    let generation = this.group?.generation() ?? { generationId: -1, memberId: '', groupInstanceId: null };
    await this.cluster.withRetry(
      async (attempt) => {
        if (retryStaleEpoch && attempt > 0 && this.group !== null) generation = this.group.generation();
        const coordinator = await this.coordinator();
        const topics = new Map<string, typeof offsets>();
        for (const o of offsets) {
          let t = topics.get(o.topic);
          if (t === undefined) topics.set(o.topic, (t = []));
          t.push(o);
        }
        const res = await this.cluster
          .send<OffsetCommitResponse>(coordinator, ApiKey.OFFSET_COMMIT, {
            groupId: this.groupId!,
            generationIdOrMemberEpoch: generation.generationId,
            memberId: generation.memberId,
            groupInstanceId: generation.groupInstanceId,
            retentionTimeMs: -1n,
            topics: [...topics].map(([name, list]) => ({
              name,
              partitions: list.map((o) => ({
                partitionIndex: o.partition,
                committedOffset: BigInt(o.offset),
                committedLeaderEpoch: epochOrNone(o.leaderEpoch),
                commitTimestamp: -1n,
                committedMetadata: o.metadata ?? '',
              })),
            })),
          })
          .catch((err: unknown) => {
            this.coordinatorId = -1;
            throw err;
          });
        for (const t of res.topics) {
          for (const p of t.partitions) {
            // A stale member or a rebalance under way: the member rejoins at the next poll, as Kafka's.
            if (p.errorCode !== 0 && this.group instanceof GroupMember)
              this.group.commitRefused(p.errorCode, generation);
            if (p.errorCode === ErrorCode.STALE_MEMBER_EPOCH && retryStaleEpoch && this.group !== null) {
              if (this.group.generation().generationId > 0)
                throw new KafkaClientError(
                  'STALE_MEMBER_EPOCH: the commit goes again with the latest epoch',
                  true,
                );
            }
            this.checkCoordinatorError(p.errorCode);
          }
        }
      },
      retries,
      deadlineMs,
    );
  }

  /** Marks partitions about to be revoked: nothing more of them is fetched or returned by poll(). */
  private markPendingRevocation(tps: TopicPartition[]): void {
    for (const tp of tps) {
      const s = this.partitions.get(tpKey(tp.topic, tp.partition));
      if (s !== undefined) s.pendingRevocation = true;
    }
  }

  /**
   * The auto-commit a classic member makes before each JoinGroup, as Kafka 3.9's ConsumerCoordinator.onJoinPrepare:
   * the positions of every partition it owns, not only those the rebalance will take away, so that the partitions a
   * cooperative member keeps are committed as of the rebalance too. A retriable failure is tried again after the
   * retry backoff, with the positions of then, until `deadlineMs` (the rebalance timeout from the start); a failure
   * that is not retriable, or the timeout, is logged and the join goes on. An eager member's partitions are held
   * back from poll() first (Kafka's maybeMarkPartitionsPendingRevocation): a fetch answered while the commit is out
   * must not move a position past the one committed before the partitions go to another member.
   */
  /**
   * The auto-commit a KIP-848 member makes before it reconciles a new target assignment, as Kafka 3.9's
   * MembershipManagerImpl.maybeReconcile with CommitRequestManager.maybeAutoCommitSyncBeforeRevocation: the positions
   * of every partition it owns (allConsumed), not only of those it gives up, retried after retriable failures (and
   * after STALE_MEMBER_EPOCH, with the latest epoch) until `deadlineMs`, the rebalance timeout from the start; a
   * commit that fails is logged and the reconciliation goes on.
   */
  private async autoCommitBeforeReconciliation(deadlineMs: number): Promise<void> {
    if (!this.o.enableAutoCommit) return;
    await this.commitPositions(this.assignment(), {
      beforeRevocation: true,
      retries: Number.POSITIVE_INFINITY,
      deadlineMs,
    }).catch((err: Error) => {
      this.cluster.options.logger?.error(
        `Auto-commit request before reconciling new assignment failed: ${err.message}. Will proceed with the ` +
          'reconciliation anyway.',
        { group: this.groupId },
      );
    });
  }

  private async autoCommitBeforeJoin(deadlineMs: number, eager: boolean): Promise<void> {
    if (!this.o.enableAutoCommit) return;
    if (eager) this.markPendingRevocation(this.assignment());
    for (;;) {
      try {
        await this.commitPositions(this.assignment(), { retries: 0, deadlineMs });
        return;
      } catch (err) {
        const left = deadlineMs - Date.now();
        if (!isRetriableError(err) || left <= 0) {
          const why = left <= 0 ? 'joinPrepare timeout' : (err as Error).message;
          this.cluster.options.logger?.error(
            `Asynchronous auto-commit of offsets failed: ${why}. Will continue to join group.`,
            { group: this.groupId },
          );
          return;
        }
        await sleep(Math.min(left, this.cluster.options.retryBackoffMs));
      }
    }
  }

  /**
   * As Kafka's ConsumerCoordinator, a subscribed member commits only with a stable generation. While it is rejoining
   * (its JoinGroup or SyncGroup out) the commit fails at once with REBALANCE_IN_PROGRESS instead of going out with a
   * generation the group is leaving: poll() completes the rebalance, and the commit can be made again then. With no
   * generation at all (not joined yet, or dropped from the group) it fails with ILLEGAL_GENERATION, Kafka's
   * CommitFailedException: sent with generation -1 the coordinator would take it unchecked, as a simple consumer's
   * (assign()), while other members may own the partitions.
   */
  private checkActiveGeneration(): void {
    if (!(this.group instanceof GroupMember)) return;
    if (this.group.joinInFlight()) {
      throw new KafkaProtocolError(
        ErrorCode.REBALANCE_IN_PROGRESS,
        'the consumer is rejoining its group, so the offsets cannot be committed now; call poll() to complete the ' +
          'rebalance, then commit again',
      );
    }
    if (this.group.generation().generationId < 0) {
      throw new KafkaProtocolError(
        ErrorCode.ILLEGAL_GENERATION,
        'Offset commit cannot be completed since the consumer is not part of an active group for auto partition ' +
          'assignment; call poll() to join the group, then commit again',
      );
    }
  }

  /**
   * Whether the interval auto-commit goes now. A classic member commits only with a stable generation (during a
   * rebalance the coordinator would refuse it). A KIP-848 member commits whenever it has an epoch, also while a
   * reconciliation is pending, as Kafka's CommitRequestManager.maybeAutoCommitAsync: the partitions it still owns
   * are its own until it acknowledges their revocation, and those about to go are committed again before that.
   */
  private autoCommitDue(): boolean {
    if (this.group instanceof ConsumerProtocolMember) return this.group.generation().generationId > 0;
    if (this.group === null) return this.groupId !== undefined && this.partitions.size > 0;
    return this.group.isStable();
  }

  /**
   * The auto-commit of the classic protocol and of assign() under a group id, as Kafka's ConsumerCoordinator
   * maybeAutoCommitOffsetsAsync: made from poll() (and assign()) once auto.commit.interval.ms has passed, with the
   * positions of what earlier polls returned, and not waited for. A timer would commit behind the application's back
   * past records it is still working on, and a crash then would lose them: committing in poll() is what makes auto
   * commit at-least-once. A failed commit is not retried (a retry would send positions older than the next poll's,
   * behind the application's back); a retriable failure brings the next one forward instead (autoCommitFailed). The
   * KIP-848 member commits on its own timer (startAutoCommit).
   */
  private maybeAutoCommit(): void {
    if (!this.o.enableAutoCommit || this.group instanceof ConsumerProtocolMember) return;
    const now = Date.now();
    if (now < this.nextAutoCommitMs || !this.autoCommitDue()) return;
    this.nextAutoCommitMs = now + this.o.autoCommitIntervalMs;
    this.commitPositions(this.assignment(), { retries: 0 }).catch((err: Error) => this.autoCommitFailed(err));
  }

  /**
   * An interval auto-commit failed (either protocol): logged, and, as Kafka's, a retriable failure is tried again
   * after the backoff, not a whole interval later.
   */
  private autoCommitFailed(err: Error): void {
    this.cluster.options.logger?.warn(`Asynchronous auto-commit of offsets failed: ${err.message}`, {
      group: this.groupId,
    });
    if (err instanceof KafkaClientError && err.retriable)
      this.nextAutoCommitMs = Math.min(this.nextAutoCommitMs, Date.now() + this.cluster.backoffMs(0));
  }

  /** Kafka's nextAutoCommitTimer.updateAndReset(autoCommitIntervalMs) on a new assignment (onJoinComplete). */
  private restartAutoCommitInterval(): void {
    this.nextAutoCommitMs = Date.now() + this.o.autoCommitIntervalMs;
    if (this.autoCommitTimer !== null) this.scheduleAutoCommit();
  }

  /**
   * The KIP-848 member's interval auto-commit, as Kafka's CommitRequestManager.maybeAutoCommitAsync: one OffsetCommit
   * per auto.commit.interval.ms, never retried (the next tick commits the newer positions instead); while one is in
   * flight no other starts, and the one due meanwhile goes once it is answered; a retriable failure brings the next
   * one forward to the retry backoff.
   */
  private startAutoCommit(): void {
    if (!this.o.enableAutoCommit || this.autoCommitTimer !== null) return;
    this.scheduleAutoCommit();
  }

  private scheduleAutoCommit(): void {
    if (this.autoCommitTimer !== null) clearTimeout(this.autoCommitTimer);
    if (this.closing) return;
    this.autoCommitTimer = setTimeout(
      () => this.intervalAutoCommit(),
      Math.max(0, this.nextAutoCommitMs - Date.now()),
    );
    this.autoCommitTimer.unref();
  }

  private intervalAutoCommit(): void {
    // In flight: the commit's end schedules the next one (Kafka's shouldAutoCommit: no commit while one is out).
    if (this.closing || this.autoCommitInFlight) return;
    const now = Date.now();
    if (now < this.nextAutoCommitMs) {
      this.scheduleAutoCommit();
      return;
    }
    this.nextAutoCommitMs = now + this.o.autoCommitIntervalMs;
    if (!this.autoCommitDue()) {
      this.scheduleAutoCommit();
      return;
    }
    this.autoCommitInFlight = true;
    this.commitPositions(this.assignment(), { retries: 0 })
      .catch((err: Error) => this.autoCommitFailed(err))
      .finally(() => {
        this.autoCommitInFlight = false;
        this.scheduleAutoCommit();
      });
  }

  /**
   * Commits (with auto commit), leaves the group, and closes the connections. `leaveGroup` overrides
   * internal.leave.group.on.close for this close (Kafka 4.1's close(CloseOptions) with a GroupMembershipOperation):
   * true sends LeaveGroup even for a static member (LEAVE_GROUP), false sends none (REMAIN_IN_GROUP). `timeoutMs`
   * (Kafka's close(Duration), default 30 s) bounds the whole close, as Kafka's one close timer: each step (the
   * commit, the leave, the fetch sessions' close, the connections' close) waits only for what is left of it, and
   * the consumer is closed either way; 0 waits for no answer. A negative timeout is refused (RangeError), as
   * Kafka's IllegalArgumentException.
   */
  async close(options: { leaveGroup?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? CLOSE_TIMEOUT_MS;
    checkCloseTimeout(timeoutMs);
    if (this.closed) return;
    const deadline = Date.now() + timeoutMs;
    const left = (): number => Math.max(0, deadline - Date.now());
    // A step cut off by the deadline goes on by itself; it fails once the connections are closed.
    const within = (step: Promise<unknown>): Promise<unknown> =>
      settleWithin(step, left(), () => new Error('close timed out')).catch(() => {});
    this.running = false;
    this.closing = true;
    if (this.autoCommitTimer !== null) clearTimeout(this.autoCommitTimer);
    // As Kafka's maybeAutoCommitOffsetsSync on close, for a subscription and for assign() under a group id alike.
    if (this.o.enableAutoCommit && this.autoCommitDue()) {
      await within(this.commitPositions(this.assignment()));
    }
    if (this.group !== null) {
      const leave =
        this.group instanceof GroupMember
          ? this.group.leave(
              undefined,
              options.leaveGroup ?? this.o.leaveGroupOnClose,
              options.leaveGroup === true,
            )
          : this.group.leave();
      await within(leave);
      this.group = null;
    }
    this.closed = true;
    this.wake();
    await this.closeFetchSessions(left());
    await within(this.cluster.close());
  }

  /**
   * Tells each broker this consumer holds a fetch session with that it is done with it, as Kafka's consumer does on
   * close (AbstractFetch.prepareCloseFetchSessionRequests): a Fetch naming the session with epoch -1 and no
   * partitions, after the fetch in flight to that broker has come back (its answer may be what opened the session).
   * Bounded by the close timeout; a broker not connected at the time is skipped and keeps the session until it
   * evicts it.
   */
  private async closeFetchSessions(timeoutMs: number): Promise<void> {
    const closing = [...this.sessions].map(async ([node, session]) => {
      await this.fetchesInFlight.get(node);
      const sessionId = session.close();
      if (sessionId === null) return;
      // As Kafka's consumer, a broker not connected now is skipped: reconnecting to a dead one would hold close().
      const connection = await this.cluster.openConnection(node);
      if (connection === null) return;
      await connection.request(ApiKey.FETCH, this.closeSessionRequest(sessionId)).catch(() => {});
    });
    await settleWithin(Promise.all(closing), timeoutMs, () => new Error('fetch sessions not closed')).catch(
      () => {},
    );
  }

  /** A Fetch that only closes session `sessionId` (epoch -1, FINAL_EPOCH): no partitions, nothing to wait for. */
  private closeSessionRequest(sessionId: number): FetchRequest {
    return {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: this.o.fetchMaxBytes,
      isolationLevel: this.isolation(),
      sessionId,
      sessionEpoch: -1,
      topics: [],
      forgottenTopicsData: [],
      rackId: this.o.clientRack,
    };
  }
}

export { sleep };
