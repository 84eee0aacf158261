// The admin client: topics, partitions, configs, cluster, log dirs, records, offsets and groups over the Kafka
// protocol. Each method sends to the broker Kafka's clients send to (the controller for topic changes, each
// broker for its own configs and log dirs, the group coordinator for group calls), retries retriable failures,
// and reports per-item errors as values (`error` on each result) rather than failing the whole call, so a tool
// can say which topic of five failed.

import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { decodeAssignment, decodeSubscription } from '../protocol/consumer-protocol/index.js';
import { ErrorCode } from '../protocol/errors.js';
import type { OffsetCommitResponse } from '../protocol/messages/08-offset-commit.js';
import type {
  OffsetFetchResponse,
  OffsetFetchResponseOffsetFetchResponseTopic,
} from '../protocol/messages/09-offset-fetch.js';
import type { DescribeGroupsResponse } from '../protocol/messages/15-describe-groups.js';
import type { ListGroupsResponse } from '../protocol/messages/16-list-groups.js';
import type { CreateTopicsResponse } from '../protocol/messages/19-create-topics.js';
import type { DeleteTopicsResponse } from '../protocol/messages/20-delete-topics.js';
import type { DeleteRecordsResponse } from '../protocol/messages/21-delete-records.js';
import type { DescribeAclsResponse } from '../protocol/messages/29-describe-acls.js';
import type { CreateAclsResponse } from '../protocol/messages/30-create-acls.js';
import type { DeleteAclsResponse } from '../protocol/messages/31-delete-acls.js';
import type { DescribeConfigsResponse } from '../protocol/messages/32-describe-configs.js';
import type { AlterConfigsResponse } from '../protocol/messages/33-alter-configs.js';
import type { AlterReplicaLogDirsResponse } from '../protocol/messages/34-alter-replica-log-dirs.js';
import type { DescribeLogDirsResponse } from '../protocol/messages/35-describe-log-dirs.js';
import type { CreatePartitionsResponse } from '../protocol/messages/37-create-partitions.js';
import type { DeleteGroupsResponse } from '../protocol/messages/42-delete-groups.js';
import type { ElectLeadersResponse } from '../protocol/messages/43-elect-leaders.js';
import type { IncrementalAlterConfigsResponse } from '../protocol/messages/44-incremental-alter-configs.js';
import type { AlterPartitionReassignmentsResponse } from '../protocol/messages/45-alter-partition-reassignments.js';
import type { ListPartitionReassignmentsResponse } from '../protocol/messages/46-list-partition-reassignments.js';
import type { OffsetDeleteResponse } from '../protocol/messages/47-offset-delete.js';
import type { DescribeClientQuotasResponse } from '../protocol/messages/48-describe-client-quotas.js';
import type { AlterClientQuotasResponse } from '../protocol/messages/49-alter-client-quotas.js';
import type { DescribeUserScramCredentialsResponse } from '../protocol/messages/50-describe-user-scram-credentials.js';
import type { AlterUserScramCredentialsResponse } from '../protocol/messages/51-alter-user-scram-credentials.js';
import type { DescribeClusterResponse } from '../protocol/messages/60-describe-cluster.js';
import { ZERO_UUID } from '../protocol/messages/codec-support.js';
import { ApiKey } from '../protocol/registry.js';
import type { AclBinding, AclBindingFilter } from '../security/authorizer/acl-types.js';
import {
  brokerOfConfigResource,
  deleteRecordsError,
  describeValue,
  isInt,
  newPartitionsError,
  unrepresentableGroup,
  unrepresentableTopic,
} from './admin-arguments.js';
import { AdminCalls } from './admin-calls.js';
import { firstError, type ListedOffsetValue, listOffsetsByPartition } from './admin-list-offsets.js';
import { beforeDeadline, Cluster, type PartitionInfo } from './cluster.js';
import { CallTimeoutError, isRetriableError, KafkaClientError, KafkaProtocolError } from './errors.js';
import { adminClientId, type ClientOptions, checkDefaultApiTimeoutMs } from './options.js';
import { callPartitionLeaders, type LeaderPartitionAnswer, partitionKey } from './partition-leader-calls.js';
import { invalidatesLeader } from './partition-leader-lookup.js';
import {
  CoordinatorType,
  checkCloseTimeout,
  checkCommittableOffset,
  EARLIEST_TIMESTAMP,
  epochOrNone,
  findCoordinator,
  findCoordinators,
  LATEST_TIMESTAMP,
  type LookupBound,
  MAX_TIMESTAMP,
  type OffsetAnswer,
  type TopicPartition,
} from './requests.js';

/** The kinds of resource that have configurations (Kafka's ConfigResource.Type). */
export type ConfigResourceType = 'topic' | 'broker' | 'broker-logger' | 'client-metrics' | 'group';
const RESOURCE_TYPE: Record<ConfigResourceType, number> = {
  topic: 2,
  broker: 4,
  'broker-logger': 8,
  'client-metrics': 16,
  group: 32,
};
export const CONFIG_SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'CLIENT_METRICS_CONFIG',
  'GROUP_CONFIG',
] as const;

function errorOf(code: number, message?: string | null): KafkaProtocolError | null {
  return code === 0 ? null : new KafkaProtocolError(code, message);
}

/**
 * Why a topic of createTopics cannot be sent, as the Kafka error its topic fails with; null when it can. Kafka's
 * admin fails a topic with no name or an empty one (InvalidTopicException) before the request; its types rule out
 * the rest, which a JavaScript caller may pass: a partition count, replication factor or assignment that is not
 * made of integers of the field's width, or a config value that is not a string.
 */
function newTopicError(t: NewTopic | null | undefined): KafkaProtocolError | null {
  if (typeof t !== 'object' || t === null || typeof t.topic !== 'string' || t.topic === '') {
    return unrepresentableTopic(typeof t === 'object' && t !== null ? t.topic : undefined);
  }
  if (t.numPartitions !== undefined && !isInt(t.numPartitions, 32))
    return new KafkaProtocolError(
      ErrorCode.INVALID_PARTITIONS,
      `numPartitions of topic ${t.topic} is not a 32-bit integer: ${describeValue(t.numPartitions)}`,
    );
  if (t.replicationFactor !== undefined && !isInt(t.replicationFactor, 16))
    return new KafkaProtocolError(
      ErrorCode.INVALID_REPLICATION_FACTOR,
      `replicationFactor of topic ${t.topic} is not a 16-bit integer: ${describeValue(t.replicationFactor)}`,
    );
  const assignment: unknown = t.replicaAssignment;
  if (
    assignment !== undefined &&
    (typeof assignment !== 'object' ||
      assignment === null ||
      Object.entries(assignment).some(
        ([p, ids]) =>
          !isInt(Number(p), 32) ||
          String(Number(p)) !== p ||
          !Array.isArray(ids) ||
          !ids.every((id) => isInt(id, 32)),
      ))
  )
    return new KafkaProtocolError(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      `replicaAssignment of topic ${t.topic} is not partition indexes to arrays of broker ids`,
    );
  const configs: unknown = t.configs;
  if (
    configs !== undefined &&
    (typeof configs !== 'object' ||
      configs === null ||
      Object.values(configs).some((v) => v !== null && typeof v !== 'string'))
  )
    return new KafkaProtocolError(
      ErrorCode.INVALID_CONFIG,
      `configs of topic ${t.topic} is not config names to string values`,
    );
  return null;
}

/** A topic to create: name, partitions, replication factor or explicit assignment, and topic configs. */
export interface NewTopic {
  topic: string;
  /** -1 (default) takes the broker's num.partitions. */
  numPartitions?: number;
  /** -1 (default) takes the broker's default.replication.factor. */
  replicationFactor?: number;
  /** partition -> broker ids; replaces numPartitions and replicationFactor. */
  replicaAssignment?: Record<number, number[]>;
  configs?: Record<string, string>;
}

export interface TopicResult {
  topic: string;
  error: KafkaProtocolError | null;
}

/**
 * The outcome of creating one topic: its id, partitions and replication factor as the controller set them.
 */
export interface CreateTopicResult extends TopicResult {
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
}

/** A topic as Metadata describes it: id, internal flag and each partition's leader, replicas and ISR. */
export interface TopicDescription extends TopicResult {
  topicId: string;
  isInternal: boolean;
  partitions: PartitionInfo[];
}

/**
 * A configuration entry of a resource as DescribeConfigs returns it (Kafka's ConfigEntry): value, source,
 * flags.
 */
export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  source: string;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: string }[];
}

/** The configuration of one resource, or the error describing it failed with. */
export interface ConfigResourceResult {
  type: ConfigResourceType;
  name: string;
  error: KafkaProtocolError | null;
  configs: ConfigEntry[];
}

/**
 * One change of IncrementalAlterConfigs: set, delete, append to or subtract from a list config (Kafka's
 * AlterConfigOp).
 */
export interface ConfigOp {
  name: string;
  op: 'set' | 'delete' | 'append' | 'subtract';
  value?: string | null;
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  assignment: TopicPartition[];
  subscribedTopics: string[];
}

/** A consumer group as DescribeGroups returns it: state, protocol, and members with their assignments. */
export interface GroupDescription {
  groupId: string;
  error: KafkaProtocolError | null;
  state: string;
  protocolType: string;
  protocol: string;
  coordinator: number;
  members: GroupMemberDescription[];
}

/** The fields of a group that was not described: its id could not be sent. */
const UNDESCRIBED_GROUP = {
  groupId: '',
  state: '',
  protocolType: '',
  protocol: '',
  coordinator: -1,
} as const;

/** A committed offset of a group for one partition (with its metadata and leader epoch). */
export interface GroupOffset extends TopicPartition {
  offset: number;
  metadata: string | null;
  leaderEpoch: number;
}

/** Kafka's ListConsumerGroupOffsetsSpec: the partitions to list, all the group has offsets for when absent or null. */
export interface ListConsumerGroupOffsetsSpec {
  topicPartitions?: TopicPartition[] | null;
}

/**
 * Kafka's ListConsumerGroupOffsetsOptions: requireStable waits for offsets that open transactions still write;
 * timeoutMs bounds the call (default.api.timeout.ms).
 */
export interface ListConsumerGroupOffsetsOptions extends AdminCallOptions {
  requireStable?: boolean;
}

/** Kafka's AbstractOptions: timeoutMs bounds the whole call, retries included (default.api.timeout.ms). */
export interface AdminCallOptions {
  timeoutMs?: number;
}

/** The admin client's options: the common ones and default.api.timeout.ms. */
export interface AdminOptions extends ClientOptions {
  /** default.api.timeout.ms (60000): how long a call without its own timeoutMs retries before it times out. */
  defaultApiTimeoutMs?: number;
}

/** Kafka's default.api.timeout.ms. */
const DEFAULT_API_TIMEOUT_MS = 60_000;

/**
 * The admin client's calls: close() refuses new ones and waits for, then cuts off, those in progress (AdminCalls).
 * Every public method but close() is one; the constructor wraps each, so that no call can be left out of close().
 */
const ADMIN_CALLS = [
  'createTopics',
  'deleteTopics',
  'listTopics',
  'describeTopics',
  'createPartitions',
  'describeConfigs',
  'alterConfigs',
  'incrementalAlterConfigs',
  'describeCluster',
  'describeLogDirs',
  'alterReplicaLogDirs',
  'deleteRecords',
  'listOffsets',
  'electLeaders',
  'alterPartitionReassignments',
  'listPartitionReassignments',
  'listGroups',
  'describeGroups',
  'deleteGroups',
  'listConsumerGroupOffsets',
  'alterConsumerGroupOffsets',
  'deleteConsumerGroupOffsets',
  'alterUserScramCredentials',
  'describeUserScramCredentials',
  'createAcls',
  'describeAcls',
  'deleteAcls',
  'alterClientQuotas',
  'describeClientQuotas',
] as const satisfies readonly (keyof Admin)[];

/**
 * One group's answer to a several-group listConsumerGroupOffsets: its offsets, or the error its group answered, or
 * REQUEST_TIMED_OUT (Kafka's TimeoutException, the CallTimeoutError as its cause) when the call's deadline came
 * before the group was answered.
 */
export interface GroupOffsetsListing {
  offsets: GroupOffset[];
  error: KafkaProtocolError | null;
}

/** One group's part of an OffsetFetch answer, whichever version carried it. */
interface GroupOffsetFetch {
  errorCode: number;
  topics: OffsetFetchResponseOffsetFetchResponseTopic[];
  /** The call's deadline came before the group was answered. */
  timedOut?: CallTimeoutError;
}

/** First OffsetFetch version with a groups array (KIP-709), and the newest this admin sends (v9 adds members). */
const OFFSET_FETCH_BATCHED_VERSION = 8;
const OFFSET_FETCH_MAX_VERSION = 9;
/** Group errors after which the group is asked again; the first two look its coordinator up again. */
const OFFSET_FETCH_RELOOKUP = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
]);

/** One partition's answer in a per-partition admin result: null, or the error that partition got. */
export interface PartitionResult extends TopicPartition {
  error: KafkaProtocolError | null;
}

/**
 * Which offset ListOffsets looks up: the earliest, the latest, the record of the largest timestamp, or the
 * first at or after a timestamp (ms).
 */
export type OffsetSpec = 'earliest' | 'latest' | 'max-timestamp' | number;

/** The options of Admin.listOffsets (Kafka's ListOffsetsOptions, and the call's timeout). */
export interface ListOffsetsOptions {
  isolationLevel?: 'read_uncommitted' | 'read_committed';
  /** The call's timeout; default.api.timeout.ms when not given. */
  timeoutMs?: number;
}

/** One partition's answer of listOffsets(..., { perPartition: true }): offset -1 and its error when it failed. */
export interface ListedOffset extends PartitionResult, ListedOffsetValue {}

function isOffsetSpec(spec: unknown): spec is OffsetSpec {
  return spec === 'earliest' || spec === 'latest' || spec === 'max-timestamp' || isInt(spec, 64);
}

/**
 * A group's offsets from its OffsetFetch answer, by topic and partition, as Kafka's ListConsumerGroupOffsetsHandler
 * lists them: a partition answered with an error (UNSTABLE_OFFSET_COMMIT under requireStable) is left out, one
 * without a committed offset listed with offset -1 (Kafka's null OffsetAndMetadata).
 */
/** A group's error in the several-group listing: the one it was answered, or REQUEST_TIMED_OUT past the deadline. */
function groupError(groupId: string, answer: GroupOffsetFetch): KafkaProtocolError {
  if (answer.timedOut === undefined)
    return new KafkaProtocolError(answer.errorCode, `OffsetFetch of group ${groupId}`);
  return new KafkaProtocolError(
    ErrorCode.REQUEST_TIMED_OUT,
    `OffsetFetch of group ${groupId}: ${answer.timedOut.message}`,
    {
      cause: answer.timedOut,
    },
  );
}

function groupOffsets(answer: GroupOffsetFetch): GroupOffset[] {
  const out: GroupOffset[] = [];
  for (const t of answer.topics) {
    for (const p of t.partitions) {
      if (p.errorCode !== 0) continue;
      out.push({
        topic: t.name,
        partition: p.partitionIndex,
        offset: Number(p.committedOffset),
        metadata: p.metadata,
        leaderEpoch: p.committedLeaderEpoch,
      });
    }
  }
  return out.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
}

function byTopic<T extends TopicPartition>(items: T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of items) {
    let l = m.get(x.topic);
    if (l === undefined) m.set(x.topic, (l = []));
    l.push(x);
  }
  return m;
}

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/**
 * A client quota entity: a user, a client id, or both. A part that is null is Kafka's default entity (every user,
 * every client id); a part left out is not part of the entity.
 */
export interface ClientQuotaEntity {
  user?: string | null;
  clientId?: string | null;
  /** An IP address (KIP-612 connection_creation_rate); alone, never with user or clientId. */
  ip?: string | null;
}

/** One quota change: a value sets the key, null removes it. */
export interface ClientQuotaOp {
  key: string;
  value: number | null;
}

/** A describe filter component: one entity type, matched exactly (null: the default), or any name it has. */
export interface ClientQuotaFilterComponent {
  entityType: 'user' | 'client-id' | 'ip';
  match: { name: string | null } | 'any';
}

function quotaEntityParts(entity: ClientQuotaEntity): { entityType: string; entityName: string | null }[] {
  const parts: { entityType: string; entityName: string | null }[] = [];
  if (entity.user !== undefined) parts.push({ entityType: 'user', entityName: entity.user });
  if (entity.clientId !== undefined) parts.push({ entityType: 'client-id', entityName: entity.clientId });
  if (entity.ip !== undefined) parts.push({ entityType: 'ip', entityName: entity.ip });
  return parts;
}

function quotaEntityOf(parts: { entityType: string; entityName: string | null }[]): ClientQuotaEntity {
  const entity: ClientQuotaEntity = {};
  for (const p of parts) {
    if (p.entityType === 'user') entity.user = p.entityName;
    else if (p.entityType === 'client-id') entity.clientId = p.entityName;
    else if (p.entityType === 'ip') entity.ip = p.entityName;
  }
  return entity;
}

/**
 * Kafka's Admin client: topics, partitions, configs, cluster, log dirs, records, offsets, groups, ACLs,
 * quotas, elections and reassignment, over the protocol only.
 */
export class Admin {
  /** The connections and metadata this client uses, exposed so tests and tools can reach one broker directly. */
  readonly cluster: Cluster;
  /** How many times a call retries: `retries` when given, else until its deadline alone (Kafka's MAX_VALUE). */
  private readonly callRetries: number;
  private readonly defaultApiTimeoutMs: number;
  private readonly calls = new AdminCalls();

  constructor(options: AdminOptions) {
    this.cluster = new Cluster({ ...options, clientId: adminClientId(options.clientId) });
    this.callRetries = options.retries ?? Number.POSITIVE_INFINITY;
    this.defaultApiTimeoutMs = checkDefaultApiTimeoutMs(
      options.defaultApiTimeoutMs ?? DEFAULT_API_TIMEOUT_MS,
    );
    for (const name of ADMIN_CALLS) {
      const method = this[name] as (...args: unknown[]) => Promise<unknown>;
      // Writable and configurable as the method it shadows, so that a test double can still replace it.
      Object.defineProperty(this, name, {
        value: (...args: unknown[]) => this.calls.track(() => method.apply(this, args)),
        writable: true,
        configurable: true,
      });
    }
  }

  /** When a call started now ends: after its own `timeoutMs` when given, else default.api.timeout.ms. */
  private deadline(timeoutMs?: number): number {
    return Date.now() + (timeoutMs ?? this.defaultApiTimeoutMs);
  }

  /** A coordinator lookup of a call: its retries and deadline. */
  private lookupBound(deadlineMs: number): LookupBound {
    return { retries: this.callRetries, deadlineMs };
  }

  /**
   * Runs one call as Kafka's admin client does: retriable failures are retried with exponential backoff
   * (retry.backoff.ms up to retry.backoff.max.ms) until the call's deadline, then it fails with a timeout.
   */
  private retrying<T>(fn: (attempt: number) => Promise<T>, deadlineMs = this.deadline()): Promise<T> {
    return this.cluster.withRetry(fn, this.callRetries, deadlineMs);
  }

  /** The controller for topic changes (Kafka's clients send CreateTopics there), else any broker. */
  private async controller(): Promise<number> {
    let snapshot = this.cluster.snapshot;
    if (snapshot.brokers.size === 0) snapshot = await this.cluster.refreshMetadata();
    if (snapshot.controllerId >= 0 && this.cluster.snapshot.brokers.has(snapshot.controllerId)) {
      return snapshot.controllerId;
    }
    return [...this.cluster.snapshot.brokers.keys()][0]!;
  }

  private async toController<T>(
    apiKey: number,
    body: unknown,
    errors: (res: T) => number[],
    timeoutMs?: number,
  ): Promise<T> {
    return this.retrying(async () => {
      const res = await this.cluster.send<T>(await this.controller(), apiKey, body);
      if (errors(res).includes(ErrorCode.NOT_CONTROLLER)) {
        await this.cluster.fetchMetadata([]);
        throw new KafkaProtocolError(ErrorCode.NOT_CONTROLLER);
      }
      return res;
    }, this.deadline(timeoutMs));
  }

  /**
   * CreateTopics, sent to the controller (retried on NOT_CONTROLLER): one result per topic, in the order given, as
   * the broker answers each on its own. `validateOnly` checks the request without creating anything. As Kafka's
   * admin, a topic given twice is sent once (the first), and a malformed topic (newTopicError) is failed here
   * without being sent; nothing is sent when no topic is left. An argument that is not an array is a TypeError.
   */
  async createTopics(
    topics: NewTopic[],
    options: { validateOnly?: boolean; timeoutMs?: number } = {},
  ): Promise<CreateTopicResult[]> {
    if (!Array.isArray(topics)) {
      throw new TypeError(`createTopics takes an array of topics (NewTopic), not ${describeValue(topics)}`);
    }
    const results: CreateTopicResult[] = [];
    const sent = new Map<string, CreateTopicResult>();
    const firsts: NewTopic[] = [];
    for (const t of topics) {
      const error = newTopicError(t);
      if (error !== null) {
        const topic = typeof t?.topic === 'string' ? t.topic : '';
        results.push({ topic, topicId: ZERO_UUID, error, numPartitions: -1, replicationFactor: -1 });
      } else if (!sent.has(t.topic)) {
        const pending = {
          topic: t.topic,
          topicId: ZERO_UUID,
          error: null,
          numPartitions: -1,
          replicationFactor: -1,
        };
        sent.set(t.topic, pending);
        firsts.push(t);
        results.push(pending);
      }
    }
    if (firsts.length === 0) return results;
    const res = await this.toController<CreateTopicsResponse>(
      ApiKey.CREATE_TOPICS,
      {
        topics: firsts.map((t) => {
          const assignment = t.replicaAssignment ?? {};
          const manual = Object.keys(assignment).length > 0;
          return {
            name: t.topic,
            numPartitions: manual ? -1 : (t.numPartitions ?? -1),
            replicationFactor: manual ? -1 : (t.replicationFactor ?? -1),
            assignments: Object.entries(assignment).map(([p, brokerIds]) => ({
              partitionIndex: Number(p),
              brokerIds,
            })),
            configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
          };
        }),
        timeoutMs: options.timeoutMs ?? 30_000,
        validateOnly: options.validateOnly ?? false,
      },
      (r) => r.topics.map((t) => t.errorCode),
      options.timeoutMs,
    );
    for (const t of res.topics) {
      const slot = sent.get(t.name);
      if (slot === undefined) continue;
      slot.topicId = t.topicId;
      slot.error = errorOf(t.errorCode, t.errorMessage);
      slot.numPartitions = t.numPartitions;
      slot.replicationFactor = t.replicationFactor;
    }
    return results;
  }

  /**
   * DeleteTopics by name, sent to the controller; each topic's error comes back as a value, not a throw, one result
   * per name in the order given. As Kafka's admin (handleDeleteTopicsUsingNames), a name given twice is sent once,
   * one that is no string or empty fails with INVALID_TOPIC_EXCEPTION without being sent, and nothing is sent when
   * no name is left. An argument that is not an array is a TypeError.
   */
  async deleteTopics(names: string[], options: { timeoutMs?: number } = {}): Promise<TopicResult[]> {
    if (!Array.isArray(names)) {
      throw new TypeError(`deleteTopics takes an array of topic names, not ${describeValue(names)}`);
    }
    const results: TopicResult[] = [];
    const sent = new Map<string, TopicResult>();
    for (const name of names) {
      if (typeof name !== 'string' || name === '') {
        results.push({ topic: '', error: unrepresentableTopic(name) });
      } else if (!sent.has(name)) {
        const pending: TopicResult = { topic: name, error: null };
        sent.set(name, pending);
        results.push(pending);
      }
    }
    if (sent.size === 0) return results;
    const unique = [...sent.keys()];
    const res = await this.toController<DeleteTopicsResponse>(
      ApiKey.DELETE_TOPICS,
      {
        topics: unique.map((name) => ({ name, topicId: ZERO_UUID })),
        topicNames: unique,
        timeoutMs: options.timeoutMs ?? 30_000,
      },
      (r) => r.responses.map((t) => t.errorCode),
      options.timeoutMs,
    );
    for (const t of res.responses) {
      const slot = sent.get(t.name ?? '');
      if (slot !== undefined) slot.error = errorOf(t.errorCode, t.errorMessage);
    }
    return results;
  }

  /** Topic names from fresh metadata; internal topics (`__consumer_offsets`...) only when asked, as in Kafka. */
  async listTopics(options: { listInternal?: boolean } = {}): Promise<string[]> {
    const snapshot = await this.retrying(() => this.cluster.fetchMetadata(null));
    return [...snapshot.topics.values()]
      .filter((t) => options.listInternal || !t.isInternal)
      .map((t) => t.name)
      .sort();
  }

  /** Partitions, leaders and replicas of the named topics (every topic when none is named), from metadata. */
  async describeTopics(names?: string[]): Promise<TopicDescription[]> {
    const snapshot = await this.retrying(() => this.cluster.fetchMetadata(names ?? null));
    const list = names ?? [...snapshot.topics.keys()].sort();
    return list.map((name) => {
      const t = snapshot.topics.get(name);
      if (t === undefined) {
        return {
          topic: name,
          topicId: ZERO_UUID,
          isInternal: false,
          partitions: [],
          error: new KafkaProtocolError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            `topic '${name}' does not exist`,
          ),
        };
      }
      return {
        topic: name,
        topicId: t.topicId,
        isInternal: t.isInternal,
        partitions: t.partitions,
        error: errorOf(t.errorCode),
      };
    });
  }

  /**
   * CreatePartitions: raises each topic's partition count to `count` (never lowers it), with optional placement.
   * One result per topic, in the order given. As Kafka's admin (a map by topic), a topic given twice is sent once
   * (the first); an entry that cannot be sent (newPartitionsError) fails here, and nothing is sent when no entry is
   * left. An argument that is not an array is a TypeError.
   */
  async createPartitions(
    requests: { topic: string; count: number; assignments?: number[][] }[],
    options: { validateOnly?: boolean; timeoutMs?: number } = {},
  ): Promise<TopicResult[]> {
    if (!Array.isArray(requests)) {
      throw new TypeError(
        `createPartitions takes an array of { topic, count } entries, not ${describeValue(requests)}`,
      );
    }
    const results: TopicResult[] = [];
    const sent = new Map<string, TopicResult>();
    const firsts: { topic: string; count: number; assignments?: number[][] }[] = [];
    for (const r of requests) {
      const error = newPartitionsError(r);
      if (error !== null) {
        results.push({ topic: typeof r?.topic === 'string' ? r.topic : '', error });
      } else if (!sent.has(r.topic)) {
        const pending: TopicResult = { topic: r.topic, error: null };
        sent.set(r.topic, pending);
        firsts.push(r);
        results.push(pending);
      }
    }
    if (firsts.length === 0) return results;
    const res = await this.toController<CreatePartitionsResponse>(
      ApiKey.CREATE_PARTITIONS,
      {
        topics: firsts.map((r) => ({
          name: r.topic,
          count: r.count,
          assignments: r.assignments == null ? null : r.assignments.map((brokerIds) => ({ brokerIds })),
        })),
        timeoutMs: options.timeoutMs ?? 30_000,
        validateOnly: options.validateOnly ?? false,
      },
      (r) => r.results.map((t) => t.errorCode),
      options.timeoutMs,
    );
    for (const t of res.results) {
      const pending = sent.get(t.name);
      if (pending !== undefined) pending.error = errorOf(t.errorCode, t.errorMessage);
    }
    return results;
  }

  /**
   * Where each config resource goes (brokerOfConfigResource), all worked out before anything is sent: a resource
   * that names no broker refuses the whole call, as Kafka's admin throws from the call itself.
   */
  private configTargets(resources: readonly { type: ConfigResourceType; name: string }[]): (number | null)[] {
    if (!Array.isArray(resources)) {
      throw new TypeError(`config calls take an array of resources, not ${describeValue(resources)}`);
    }
    return resources.map((r) => brokerOfConfigResource(r.type, r.name));
  }

  /** DescribeConfigs: the effective configs of topics or brokers, with their source and, if asked, synonyms. */
  async describeConfigs(
    resources: { type: ConfigResourceType; name: string; keys?: string[] }[],
    options: { includeSynonyms?: boolean; includeDocumentation?: boolean } = {},
  ): Promise<ConfigResourceResult[]> {
    const out: ConfigResourceResult[] = [];
    const targets = this.configTargets(resources);
    for (const [i, r] of resources.entries()) {
      const target = targets[i]!;
      const body = {
        resources: [
          { resourceType: RESOURCE_TYPE[r.type], resourceName: r.name, configurationKeys: r.keys ?? null },
        ],
        includeSynonyms: options.includeSynonyms ?? false,
        includeDocumentation: options.includeDocumentation ?? false,
      };
      const res = await this.retrying(() =>
        target === null
          ? this.cluster.sendAny<DescribeConfigsResponse>(ApiKey.DESCRIBE_CONFIGS, body)
          : this.cluster.send<DescribeConfigsResponse>(target, ApiKey.DESCRIBE_CONFIGS, body),
      );
      for (const x of res.results) {
        out.push({
          type: r.type,
          name: x.resourceName,
          error: errorOf(x.errorCode, x.errorMessage),
          configs: x.configs.map((c) => ({
            name: c.name,
            value: c.value,
            readOnly: c.readOnly,
            isDefault: c.configSource === 5 || (c.configSource < 0 && c.isDefault),
            source: CONFIG_SOURCES[c.configSource] ?? 'UNKNOWN',
            isSensitive: c.isSensitive,
            synonyms: c.synonyms.map((s) => ({
              name: s.name,
              value: s.value,
              source: CONFIG_SOURCES[s.source] ?? 'UNKNOWN',
            })),
          })),
        });
      }
    }
    return out;
  }

  /** AlterConfigs (legacy): replaces the resource's whole dynamic config with `configs`. */
  async alterConfigs(
    resources: { type: ConfigResourceType; name: string; configs: Record<string, string> }[],
    options: { validateOnly?: boolean } = {},
  ): Promise<{ type: ConfigResourceType; name: string; error: KafkaProtocolError | null }[]> {
    const out = [];
    const targets = this.configTargets(resources);
    for (const [i, r] of resources.entries()) {
      const target = targets[i]!;
      const body = {
        resources: [
          {
            resourceType: RESOURCE_TYPE[r.type],
            resourceName: r.name,
            configs: Object.entries(r.configs).map(([name, value]) => ({ name, value })),
          },
        ],
        validateOnly: options.validateOnly ?? false,
      };
      const res = await this.retrying(() =>
        target === null
          ? this.cluster.sendAny<AlterConfigsResponse>(ApiKey.ALTER_CONFIGS, body)
          : this.cluster.send<AlterConfigsResponse>(target, ApiKey.ALTER_CONFIGS, body),
      );
      for (const x of res.responses)
        out.push({ type: r.type, name: x.resourceName, error: errorOf(x.errorCode, x.errorMessage) });
    }
    return out;
  }

  /**
   * IncrementalAlterConfigs: set, delete, append or subtract single keys, leaving the others as they are (unlike
   * the legacy AlterConfigs, which replaces the whole set).
   */
  async incrementalAlterConfigs(
    resources: { type: ConfigResourceType; name: string; ops: ConfigOp[] }[],
    options: { validateOnly?: boolean } = {},
  ): Promise<{ type: ConfigResourceType; name: string; error: KafkaProtocolError | null }[]> {
    const OPS = { set: 0, delete: 1, append: 2, subtract: 3 } as const;
    const out = [];
    const targets = this.configTargets(resources);
    for (const [i, r] of resources.entries()) {
      const target = targets[i]!;
      // An operation Kafka's AlterConfigOp.OpType has no value for: the broker's answer to an unknown operation
      // byte (INVALID_REQUEST), here without sending it (it used to go out as SET, 0).
      const unknown = r.ops.find((o) => !Object.hasOwn(OPS, o.op));
      if (unknown !== undefined) {
        const message = `unknown config operation ${describeValue(unknown.op)} for ${unknown.name}`;
        out.push({
          type: r.type,
          name: r.name,
          error: new KafkaProtocolError(ErrorCode.INVALID_REQUEST, message),
        });
        continue;
      }
      const body = {
        resources: [
          {
            resourceType: RESOURCE_TYPE[r.type],
            resourceName: r.name,
            configs: r.ops.map((o) => ({ name: o.name, configOperation: OPS[o.op], value: o.value ?? null })),
          },
        ],
        validateOnly: options.validateOnly ?? false,
      };
      const res = await this.retrying(() =>
        target === null
          ? this.cluster.sendAny<IncrementalAlterConfigsResponse>(ApiKey.INCREMENTAL_ALTER_CONFIGS, body)
          : this.cluster.send<IncrementalAlterConfigsResponse>(
              target,
              ApiKey.INCREMENTAL_ALTER_CONFIGS,
              body,
            ),
      );
      for (const x of res.responses)
        out.push({ type: r.type, name: x.resourceName, error: errorOf(x.errorCode, x.errorMessage) });
    }
    return out;
  }

  /** The cluster id, the active controller and the brokers, as the metadata of any broker gives them. */
  async describeCluster(): Promise<{
    clusterId: string | null;
    controllerId: number;
    brokers: { nodeId: number; host: string; port: number; rack: string | null }[];
  }> {
    return this.retrying(async () => {
      const c = await this.cluster.anyConnection();
      if (c.versionRange(ApiKey.DESCRIBE_CLUSTER) === undefined) {
        const m = await this.cluster.fetchMetadata([]);
        return { clusterId: m.clusterId, controllerId: m.controllerId, brokers: [...m.brokers.values()] };
      }
      const res = await c.request<DescribeClusterResponse>(ApiKey.DESCRIBE_CLUSTER, {
        includeClusterAuthorizedOperations: false,
        endpointType: 1,
      });
      if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, res.errorMessage);
      return {
        clusterId: res.clusterId,
        controllerId: res.controllerId,
        brokers: res.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port, rack: b.rack })),
      };
    });
  }

  /** DescribeLogDirs of each broker (every one by default): its directories, their space and partition sizes. */
  async describeLogDirs(brokerIds?: number[]): Promise<
    {
      broker: number;
      logDir: string;
      error: KafkaProtocolError | null;
      totalBytes: number;
      usableBytes: number;
      partitions: { topic: string; partition: number; size: number; offsetLag: number; isFuture: boolean }[];
    }[]
  > {
    const ids = brokerIds ?? [...(await this.cluster.refreshMetadata()).brokers.keys()];
    const out = [];
    for (const broker of ids) {
      const res = await this.retrying(() =>
        this.cluster.send<DescribeLogDirsResponse>(broker, ApiKey.DESCRIBE_LOG_DIRS, { topics: null }),
      );
      for (const d of res.results) {
        out.push({
          broker,
          logDir: d.logDir,
          error: errorOf(d.errorCode || res.errorCode),
          totalBytes: Number(d.totalBytes),
          usableBytes: Number(d.usableBytes),
          partitions: d.topics.flatMap((t) =>
            t.partitions.map((p) => ({
              topic: t.name,
              partition: p.partitionIndex,
              size: Number(p.partitionSize),
              offsetLag: Number(p.offsetLag),
              isFuture: p.isFutureKey,
            })),
          ),
        });
      }
    }
    return out;
  }

  /**
   * Moves replicas to other log directories of their brokers (AlterReplicaLogDirs, sent to each replica's broker,
   * as Kafka's Admin.alterReplicaLogDirs does). Each replica's answer: null, or its error (LOG_DIR_NOT_FOUND,
   * KAFKA_STORAGE_ERROR, REPLICA_NOT_AVAILABLE when the broker does not host the replica yet).
   */
  async alterReplicaLogDirs(
    moves: readonly { topic: string; partition: number; broker: number; logDir: string }[],
  ): Promise<
    { topic: string; partition: number; broker: number; logDir: string; error: KafkaProtocolError | null }[]
  > {
    const byBroker = new Map<number, Map<string, Map<string, number[]>>>();
    for (const m of moves) {
      let dirs = byBroker.get(m.broker);
      if (dirs === undefined) byBroker.set(m.broker, (dirs = new Map()));
      let topics = dirs.get(m.logDir);
      if (topics === undefined) dirs.set(m.logDir, (topics = new Map()));
      let partitions = topics.get(m.topic);
      if (partitions === undefined) topics.set(m.topic, (partitions = []));
      partitions.push(m.partition);
    }
    const errors = new Map<string, KafkaProtocolError | null>();
    for (const [broker, dirs] of byBroker) {
      const res = await this.retrying(() =>
        this.cluster.send<AlterReplicaLogDirsResponse>(broker, ApiKey.ALTER_REPLICA_LOG_DIRS, {
          dirs: [...dirs].map(([path, topics]) => ({
            path,
            topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
          })),
        }),
      );
      for (const t of res.results) {
        for (const p of t.partitions)
          errors.set(`${broker}/${t.topicName}/${p.partitionIndex}`, errorOf(p.errorCode));
      }
    }
    return moves.map((m) => ({ ...m, error: errors.get(`${m.broker}/${m.topic}/${m.partition}`) ?? null }));
  }

  /**
   * Deletes records before `offset` (-1: the high watermark) in each partition; answers the new low watermarks. Each
   * partition's leader is looked up as Kafka's DeleteRecordsHandler does (see deleteRecordsAtLeaders) until
   * `timeoutMs` (default.api.timeout.ms), which is also the request's wait for the low watermark to replicate.
   * As Kafka's admin (a map by partition), a partition given twice is sent and answered once, with its first offset,
   * as createTopics and createPartitions keep a topic's first entry.
   */
  async deleteRecords(
    requests: (TopicPartition & { offset: number })[],
    options: { timeoutMs?: number } = {},
  ): Promise<(PartitionResult & { lowWatermark: number })[]> {
    if (!Array.isArray(requests)) {
      throw new TypeError(
        `deleteRecords takes an array of { topic, partition, offset } entries, not ${describeValue(requests)}`,
      );
    }
    const results: (PartitionResult & { lowWatermark: number })[] = [];
    const sendable: (TopicPartition & { offset: number })[] = [];
    const seen = new Set<string>();
    for (const r of requests) {
      const error = deleteRecordsError(r);
      if (error === null) {
        // The integer partition first: "0/a-1" and "10/a" cannot be mixed up, as "a-1-0" and "a-10" would.
        const key = `${r.partition}/${r.topic}`;
        if (!seen.has(key)) sendable.push(r);
        seen.add(key);
      } else {
        const topic = typeof r?.topic === 'string' ? r.topic : '';
        const partition = typeof r?.partition === 'number' ? r.partition : -1;
        results.push({ topic, partition, lowWatermark: -1, error });
      }
    }
    const answers = await this.deleteRecordsAtLeaders(
      sendable,
      this.deadline(options.timeoutMs),
      options.timeoutMs ?? this.defaultApiTimeoutMs,
    );
    results.push(...answers);
    return results;
  }

  /**
   * One DeleteRecords per leader, as Kafka's DeleteRecordsHandler with PartitionLeaderStrategy
   * (callPartitionLeaders): a partition whose leader answers an InvalidMetadataException code (NOT_LEADER_OR_FOLLOWER
   * after a leader change: invalidatesLeader) is looked up again, one answered with another retriable error
   * (REQUEST_TIMED_OUT) goes to the same leader again, until `deadlineMs`; a failed partition's low watermark is -1,
   * as Kafka gives none. One answer per entry, in the order of `entries`.
   */
  private async deleteRecordsAtLeaders(
    entries: readonly (TopicPartition & { offset: number })[],
    deadlineMs: number,
    requestTimeoutMs: number,
  ): Promise<(PartitionResult & { lowWatermark: number })[]> {
    const outcomes = await callPartitionLeaders(this.cluster, entries, {
      name: 'deleteRecords',
      deadlineMs,
      retries: this.callRetries,
      invalidatesLeader,
      send: async (leader, list) => {
        const res = await this.cluster.send<DeleteRecordsResponse>(leader, ApiKey.DELETE_RECORDS, {
          topics: [...byTopic([...list])].map(([name, ps]) => ({
            name,
            partitions: ps.map((p) => ({ partitionIndex: p.partition, offset: BigInt(p.offset) })),
          })),
          timeoutMs: requestTimeoutMs,
        });
        const answers = new Map<string, LeaderPartitionAnswer<number>>();
        for (const t of res.topics)
          for (const p of t.partitions)
            answers.set(partitionKey(t.name, p.partitionIndex), {
              code: p.errorCode,
              value: Number(p.lowWatermark),
            });
        return answers;
      },
    });
    return entries.map((r) => {
      const outcome = outcomes.get(partitionKey(r.topic, r.partition))!;
      return {
        topic: r.topic,
        partition: r.partition,
        lowWatermark: outcome.value ?? -1,
        error: outcome.error,
      };
    });
  }

  /**
   * Offsets by spec: earliest, latest, the max-timestamp record, or the first at or after a timestamp. Each
   * partition goes to its leader as Kafka's ListOffsetsHandler sends it (listOffsetsByPartition), until `timeoutMs`
   * (default.api.timeout.ms). The array answer is Kafka's ListOffsetsResult.all(): the offsets in the order given,
   * or the first failed partition's error thrown, and there a partition whose topic is no string or empty fails the
   * call with INVALID_TOPIC_EXCEPTION before anything is sent. With `perPartition: true`, as Kafka's
   * partitionResult(tp) futures, each entry is answered on its own: its offset, or its error with offset, timestamp
   * and leader epoch -1 (the unrepresentable topic there too). A spec that is none of the four, or an argument that
   * is not an array, is a TypeError (Java's OffsetSpec rules them out) rather than a failure deep in the encoding.
   */
  async listOffsets(
    requests: (TopicPartition & { spec: OffsetSpec })[],
    options?: ListOffsetsOptions & { perPartition?: false },
  ): Promise<OffsetAnswer[]>;
  async listOffsets(
    requests: (TopicPartition & { spec: OffsetSpec })[],
    options: ListOffsetsOptions & { perPartition: true },
  ): Promise<ListedOffset[]>;
  async listOffsets(
    requests: (TopicPartition & { spec: OffsetSpec })[],
    options: ListOffsetsOptions & { perPartition?: boolean } = {},
  ): Promise<OffsetAnswer[] | ListedOffset[]> {
    if (!Array.isArray(requests)) {
      throw new TypeError(
        `listOffsets takes an array of { topic, partition, spec } entries, not ${describeValue(requests)}`,
      );
    }
    const perPartition = options.perPartition === true;
    const unsendable = new Map<number, KafkaProtocolError>();
    requests.forEach((r, i) => {
      if (typeof r?.topic !== 'string' || r.topic === '') {
        if (!perPartition) throw unrepresentableTopic(r?.topic);
        unsendable.set(i, unrepresentableTopic(r?.topic));
      } else if (!isOffsetSpec(r.spec)) {
        throw new TypeError(
          `the offset spec of ${r.topic}-${r.partition} is not 'earliest', 'latest', 'max-timestamp' or a timestamp: ${describeValue(r.spec)}`,
        );
      }
    });
    const ts = (s: OffsetSpec): number =>
      s === 'earliest'
        ? EARLIEST_TIMESTAMP
        : s === 'latest'
          ? LATEST_TIMESTAMP
          : s === 'max-timestamp'
            ? MAX_TIMESTAMP
            : s;
    const sendable = requests.filter((_, i) => !unsendable.has(i));
    const outcomes = await listOffsetsByPartition(
      this.cluster,
      sendable.map((r) => ({ topic: r.topic, partition: r.partition, timestamp: ts(r.spec) })),
      {
        isolationLevel: options.isolationLevel === 'read_committed' ? 1 : 0,
        deadlineMs: this.deadline(options.timeoutMs),
        retries: this.callRetries,
      },
    );
    if (!perPartition) {
      const error = firstError(outcomes);
      if (error !== null) throw error;
      return outcomes.map((o, i) => ({
        topic: sendable[i]!.topic,
        partition: sendable[i]!.partition,
        ...o.value!,
      }));
    }
    let next = 0;
    return requests.map((r, i): ListedOffset => {
      const failed = unsendable.get(i);
      const topic = typeof r?.topic === 'string' ? r.topic : '';
      const partition = typeof r?.partition === 'number' ? r.partition : -1;
      if (failed !== undefined)
        return { topic, partition, offset: -1, timestamp: -1, leaderEpoch: -1, error: failed };
      const outcome = outcomes[next++]!;
      return outcome.error === null
        ? { topic, partition, ...outcome.value, error: null }
        : { topic, partition, offset: -1, timestamp: -1, leaderEpoch: -1, error: outcome.error };
    });
  }

  /** Elects leaders (preferred or unclean) for these partitions, or for every partition when omitted. */
  async electLeaders(
    type: 'preferred' | 'unclean',
    partitions?: TopicPartition[],
    options: { timeoutMs?: number } = {},
  ): Promise<PartitionResult[]> {
    const res = await this.toController<ElectLeadersResponse>(
      ApiKey.ELECT_LEADERS,
      {
        electionType: type === 'preferred' ? 0 : 1,
        topicPartitions:
          partitions === undefined
            ? null
            : [...byTopic(partitions)].map(([topic, ps]) => ({
                topic,
                partitions: ps.map((p) => p.partition),
              })),
        timeoutMs: options.timeoutMs ?? 30_000,
      },
      (r) => [r.errorCode],
      options.timeoutMs,
    );
    if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, 'ElectLeaders');
    return res.replicaElectionResults.flatMap((t) =>
      t.partitionResult.map((p) => ({
        topic: t.topic,
        partition: p.partitionId,
        error: errorOf(p.errorCode, p.errorMessage),
      })),
    );
  }

  /** Starts (replicas given) or cancels (replicas null) partition reassignments. */
  async alterPartitionReassignments(
    requests: (TopicPartition & { replicas: number[] | null })[],
    options: { timeoutMs?: number } = {},
  ): Promise<PartitionResult[]> {
    const res = await this.toController<AlterPartitionReassignmentsResponse>(
      ApiKey.ALTER_PARTITION_REASSIGNMENTS,
      {
        timeoutMs: options.timeoutMs ?? 30_000,
        topics: [...byTopic(requests)].map(([name, ps]) => ({
          name,
          partitions: ps.map((p) => ({ partitionIndex: p.partition, replicas: p.replicas })),
        })),
      },
      (r) => [r.errorCode],
      options.timeoutMs,
    );
    if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, res.errorMessage);
    return res.responses.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionIndex,
        error: errorOf(p.errorCode, p.errorMessage),
      })),
    );
  }

  /** Reassignments in progress (all, or of these partitions). */
  async listPartitionReassignments(
    partitions?: TopicPartition[],
  ): Promise<
    (TopicPartition & { replicas: number[]; addingReplicas: number[]; removingReplicas: number[] })[]
  > {
    const res = await this.toController<ListPartitionReassignmentsResponse>(
      ApiKey.LIST_PARTITION_REASSIGNMENTS,
      {
        timeoutMs: 30_000,
        topics:
          partitions === undefined
            ? null
            : [...byTopic(partitions)].map(([name, ps]) => ({
                name,
                partitionIndexes: ps.map((p) => p.partition),
              })),
      },
      (r) => [r.errorCode],
    );
    if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, res.errorMessage);
    return res.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partitionIndex,
        replicas: p.replicas,
        addingReplicas: p.addingReplicas,
        removingReplicas: p.removingReplicas,
      })),
    );
  }

  // ---- groups -------------------------------------------------------------------------------------------------

  /** Every group of the cluster: ListGroups goes to each broker, as each only knows the groups it coordinates. */
  async listGroups(): Promise<{ groupId: string; protocolType: string; state: string; broker: number }[]> {
    const brokers = [...(await this.cluster.refreshMetadata()).brokers.keys()];
    const out = [];
    for (const broker of brokers) {
      const res = await this.retrying(() =>
        this.cluster.send<ListGroupsResponse>(broker, ApiKey.LIST_GROUPS, {
          statesFilter: [],
          typesFilter: [],
        }),
      );
      if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, `ListGroups at broker ${broker}`);
      for (const g of res.groups)
        out.push({ groupId: g.groupId, protocolType: g.protocolType, state: g.groupState, broker });
    }
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
  }

  private async coordinatorCall<T>(
    groupId: string,
    apiKey: number,
    body: unknown,
    codeOf: (r: T) => number,
    deadlineMs: number,
  ): Promise<T> {
    return this.retrying(async () => {
      const coordinator = await findCoordinator(
        this.cluster,
        groupId,
        CoordinatorType.GROUP,
        this.lookupBound(deadlineMs),
      );
      const res = await this.cluster.send<T>(coordinator, apiKey, body);
      const code = codeOf(res);
      if (
        code === ErrorCode.NOT_COORDINATOR ||
        code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ||
        code === ErrorCode.COORDINATOR_NOT_AVAILABLE
      ) {
        throw new KafkaProtocolError(code, `group ${groupId}`);
      }
      return res;
    }, deadlineMs);
  }

  /**
   * Each group's state, protocol and members, asked of the group's own coordinator; retried (a coordinator
   * loading or moved) for at most `timeoutMs` (default.api.timeout.ms), as Kafka's describeConsumerGroups. A group
   * id that is no string is described with INVALID_GROUP_ID (groupId '') without being looked up.
   */
  async describeGroups(groupIds: string[], options: AdminCallOptions = {}): Promise<GroupDescription[]> {
    const out: GroupDescription[] = [];
    const deadlineMs = this.deadline(options.timeoutMs);
    for (const groupId of groupIds) {
      const unrepresentable = unrepresentableGroup(groupId);
      if (unrepresentable !== null) {
        out.push({ ...UNDESCRIBED_GROUP, error: unrepresentable, members: [] });
        continue;
      }
      const coordinator = await findCoordinator(
        this.cluster,
        groupId,
        CoordinatorType.GROUP,
        this.lookupBound(deadlineMs),
      );
      const res = await this.coordinatorCall<DescribeGroupsResponse>(
        groupId,
        ApiKey.DESCRIBE_GROUPS,
        { groups: [groupId], includeAuthorizedOperations: false },
        (r) => r.groups[0]?.errorCode ?? 0,
        deadlineMs,
      );
      for (const g of res.groups) {
        out.push({
          groupId: g.groupId,
          error: errorOf(g.errorCode),
          state: g.groupState,
          protocolType: g.protocolType,
          protocol: g.protocolData,
          coordinator,
          members: g.members.map((m) => {
            let assignment: TopicPartition[] = [];
            let subscribedTopics: string[] = [];
            if (g.protocolType === 'consumer') {
              try {
                if (m.memberAssignment.length > 0) {
                  assignment = decodeAssignment(m.memberAssignment).value.assignedPartitions.flatMap((t) =>
                    t.partitions.map((partition) => ({ topic: t.topic, partition })),
                  );
                }
                if (m.memberMetadata.length > 0)
                  subscribedTopics = decodeSubscription(m.memberMetadata).value.topics;
              } catch {
                // A member of another client may write blobs this client cannot read; show it without them.
              }
            }
            return {
              memberId: m.memberId,
              groupInstanceId: m.groupInstanceId,
              clientId: m.clientId,
              clientHost: m.clientHost,
              assignment,
              subscribedTopics,
            };
          }),
        });
      }
    }
    return out;
  }

  /**
   * Deletes empty groups at their coordinators; a group with members answers NON_EMPTY_GROUP as a value. One result
   * per group, in the order given: as Kafka's admin (its groups are a set), a group given twice is deleted once,
   * and a group id that is no string fails with INVALID_GROUP_ID without being looked up (the empty one is sent).
   * An argument that is not an array is a TypeError.
   */
  async deleteGroups(
    groupIds: string[],
    options: AdminCallOptions = {},
  ): Promise<{ groupId: string; error: KafkaProtocolError | null }[]> {
    if (!Array.isArray(groupIds)) {
      throw new TypeError(`deleteGroups takes an array of group ids, not ${describeValue(groupIds)}`);
    }
    const out = [];
    const seen = new Set<string>();
    const deadlineMs = this.deadline(options.timeoutMs);
    for (const groupId of groupIds) {
      const unrepresentable = unrepresentableGroup(groupId);
      if (unrepresentable !== null) {
        out.push({ groupId: typeof groupId === 'string' ? groupId : '', error: unrepresentable });
        continue;
      }
      if (seen.has(groupId)) continue;
      seen.add(groupId);
      const res = await this.coordinatorCall<DeleteGroupsResponse>(
        groupId,
        ApiKey.DELETE_GROUPS,
        { groupsNames: [groupId] },
        (r) => r.results[0]?.errorCode ?? 0,
        deadlineMs,
      );
      for (const r of res.results) out.push({ groupId: r.groupId, error: errorOf(r.errorCode) });
    }
    return out;
  }

  /**
   * Committed offsets of a group (all partitions when `partitions` is omitted); a group error throws. Given a map
   * (or record) of group ids to specs instead, Kafka's several-group form: the groups of one coordinator go in one
   * OffsetFetch (v8+, or one v7 request per group to an older broker) and each group answers apart, a group error
   * as its `error`. In both forms, as Kafka's admin, a partition answered with an error is left out and one without
   * a committed offset is listed with offset -1 (where Kafka's map holds null).
   */
  async listConsumerGroupOffsets(
    groupId: string,
    partitions?: TopicPartition[],
    options?: ListConsumerGroupOffsetsOptions,
  ): Promise<GroupOffset[]>;
  async listConsumerGroupOffsets(
    groupSpecs:
      | ReadonlyMap<string, ListConsumerGroupOffsetsSpec>
      | Readonly<Record<string, ListConsumerGroupOffsetsSpec>>,
    options?: ListConsumerGroupOffsetsOptions,
  ): Promise<Map<string, GroupOffsetsListing>>;
  async listConsumerGroupOffsets(
    first:
      | string
      | ReadonlyMap<string, ListConsumerGroupOffsetsSpec>
      | Readonly<Record<string, ListConsumerGroupOffsetsSpec>>,
    second?: TopicPartition[] | ListConsumerGroupOffsetsOptions,
    third?: ListConsumerGroupOffsetsOptions,
  ): Promise<GroupOffset[] | Map<string, GroupOffsetsListing>> {
    if (typeof first !== 'object' || first === null) {
      // A group id that is no string, in the one-group form: refused as Kafka refuses a null group id.
      const unrepresentable = unrepresentableGroup(first);
      if (unrepresentable !== null) throw unrepresentable;
    }
    if (typeof first === 'string') {
      const partitions = Array.isArray(second) ? second : undefined;
      const specs = new Map([[first, partitions ?? null]]);
      const deadlineMs = this.deadline(third?.timeoutMs);
      const answer = (await this.offsetFetchGroups(specs, third?.requireStable ?? false, deadlineMs)).get(
        first,
      )!;
      if (answer.timedOut !== undefined) throw answer.timedOut;
      if (answer.errorCode !== 0)
        throw new KafkaProtocolError(answer.errorCode, `OffsetFetch of group ${first}`);
      return groupOffsets(answer);
    }
    const entries = first instanceof Map ? [...first] : Object.entries(first);
    const specs = new Map(entries.map(([g, spec]) => [g, spec.topicPartitions ?? null]));
    const options = Array.isArray(second) ? undefined : second;
    const deadlineMs = this.deadline(options?.timeoutMs);
    const answers = await this.offsetFetchGroups(specs, options?.requireStable ?? false, deadlineMs);
    const out = new Map<string, GroupOffsetsListing>();
    for (const [g, answer] of answers) {
      out.set(
        g,
        answer.errorCode !== 0
          ? { offsets: [], error: groupError(g, answer) }
          : { offsets: groupOffsets(answer), error: null },
      );
    }
    return out;
  }

  /**
   * Kafka's ListConsumerGroupOffsetsHandler: each group's coordinator is looked up, and the groups of one
   * coordinator are asked in one request. A group answered COORDINATOR_LOAD_IN_PROGRESS is asked again of the same
   * coordinator, one answered NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE (or whose request failed on the way) of
   * its coordinator looked up again; any other group error is that group's answer. When the call's deadline comes
   * (while backing off, looking up or waiting for an answer), the groups answered keep their answers and the others
   * are answered timed out, as Kafka's admin fails only the futures of the groups still pending.
   */
  private async offsetFetchGroups(
    specs: ReadonlyMap<string, TopicPartition[] | null>,
    requireStable: boolean,
    deadlineMs: number,
  ): Promise<Map<string, GroupOffsetFetch>> {
    const answers = new Map<string, GroupOffsetFetch>();
    const coordinators = new Map<string, number>();
    let left = [...specs.keys()].filter((g) => {
      if (unrepresentableGroup(g) === null) return true;
      answers.set(g, { errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] });
      return false;
    });
    let lastFailure: unknown = null;
    let timedOut: CallTimeoutError | null = null;
    try {
      for (let attempt = 0; left.length > 0 && timedOut === null; attempt++) {
        // As Kafka's admin, the groups are asked again until the call's deadline, then they time out.
        if (attempt > 0) await this.cluster.backoffUntil(attempt - 1, deadlineMs, lastFailure);
        // The groups without a coordinator are looked up in one FindCoordinator; a lookup that fails (refused, as
        // GROUP_AUTHORIZATION_FAILED) fails its group alone.
        const unmapped = left.filter((g) => !coordinators.has(g));
        if (unmapped.length > 0) {
          for (const [g, found] of await findCoordinators(
            this.cluster,
            unmapped,
            CoordinatorType.GROUP,
            this.lookupBound(deadlineMs),
          )) {
            if (typeof found === 'number') coordinators.set(g, found);
            else answers.set(g, { errorCode: found.code, topics: [] });
          }
        }
        const byCoordinator = new Map<number, string[]>();
        for (const g of left) {
          const node = coordinators.get(g);
          if (node === undefined) continue;
          byCoordinator.set(node, [...(byCoordinator.get(node) ?? []), g]);
        }
        const retry: string[] = [];
        const lastAttempt = attempt >= this.callRetries;
        await Promise.all(
          [...byCoordinator].map(async ([node, groups]) => {
            let answered: Map<string, GroupOffsetFetch>;
            try {
              answered = await beforeDeadline(
                this.offsetFetch(node, groups, specs, requireStable),
                deadlineMs,
                attempt,
              );
            } catch (err) {
              if (err instanceof CallTimeoutError) {
                timedOut = err;
                return;
              }
              if (lastAttempt || !isRetriableError(err)) throw err;
              lastFailure = err;
              for (const g of groups) coordinators.delete(g);
              retry.push(...groups);
              return;
            }
            for (const [g, answer] of answered) {
              const code = answer.errorCode;
              const again =
                code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || OFFSET_FETCH_RELOOKUP.has(code);
              if (!again || lastAttempt) answers.set(g, answer);
              else {
                lastFailure = new KafkaProtocolError(code, `OffsetFetch of group ${g}`);
                if (OFFSET_FETCH_RELOOKUP.has(code)) coordinators.delete(g);
                retry.push(g);
              }
            }
          }),
        );
        left = retry;
      }
    } catch (err) {
      if (!(err instanceof CallTimeoutError)) throw err;
      timedOut = err;
    }
    if (timedOut !== null) {
      for (const g of specs.keys()) {
        if (!answers.has(g)) answers.set(g, { errorCode: ErrorCode.REQUEST_TIMED_OUT, topics: [], timedOut });
      }
    }
    return answers;
  }

  /**
   * One coordinator's groups: one OffsetFetch with its groups array when the broker serves v8+, else one request per
   * group (Kafka's fallback when batching is not supported). A group the answer leaves out has no offsets.
   */
  private async offsetFetch(
    node: number,
    groups: string[],
    specs: ReadonlyMap<string, TopicPartition[] | null>,
    requireStable: boolean,
  ): Promise<Map<string, GroupOffsetFetch>> {
    const topicsOf = (g: string) => {
      const partitions = specs.get(g) ?? null;
      if (partitions === null) return null;
      return [...byTopic(partitions)].map(([name, ps]) => ({
        name,
        partitionIndexes: ps.map((p) => p.partition),
      }));
    };
    const out = new Map<string, GroupOffsetFetch>();
    const range = (await this.cluster.connection(node)).versionRange(ApiKey.OFFSET_FETCH);
    if (range !== undefined && range.max >= OFFSET_FETCH_BATCHED_VERSION) {
      const res = await this.cluster.send<OffsetFetchResponse>(
        node,
        ApiKey.OFFSET_FETCH,
        {
          groupId: '',
          topics: [],
          groups: groups.map((g) => ({ groupId: g, memberId: null, memberEpoch: -1, topics: topicsOf(g) })),
          requireStable,
        },
        { version: Math.min(range.max, OFFSET_FETCH_MAX_VERSION) },
      );
      for (const g of groups) out.set(g, { errorCode: 0, topics: [] });
      for (const g of res.groups) if (out.has(g.groupId)) out.set(g.groupId, g);
      return out;
    }
    await Promise.all(
      groups.map(async (g) => {
        const res = await this.cluster.send<OffsetFetchResponse>(node, ApiKey.OFFSET_FETCH, {
          groupId: g,
          topics: topicsOf(g),
          groups: [],
          requireStable,
        });
        out.set(g, res);
      }),
    );
    return out;
  }

  /**
   * Sets committed offsets of a group that has no active members (Kafka refuses it for a live group). Each offset
   * carries its metadata and leader epoch as Kafka's OffsetAndMetadata does: metadata '' and epoch -1 unless given,
   * a negative epoch none (-1) too (MirrorMaker passes the source commit's metadata through, and OffsetFetch returns
   * what was stored here).
   */
  async alterConsumerGroupOffsets(
    groupId: string,
    offsets: (TopicPartition & { offset: number; metadata?: string | null; leaderEpoch?: number })[],
    options: AdminCallOptions = {},
  ): Promise<PartitionResult[]> {
    const unrepresentable = unrepresentableGroup(groupId);
    if (unrepresentable !== null) throw unrepresentable;
    for (const o of offsets) checkCommittableOffset(o.offset);
    const res = await this.coordinatorCall<OffsetCommitResponse>(
      groupId,
      ApiKey.OFFSET_COMMIT,
      {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [...byTopic(offsets)].map(([name, ps]) => ({
          name,
          partitions: ps.map((p) => ({
            partitionIndex: p.partition,
            committedOffset: BigInt(p.offset),
            committedLeaderEpoch: epochOrNone(p.leaderEpoch),
            commitTimestamp: -1n,
            // Kafka's OffsetAndMetadata turns null metadata into '', as the broker does.
            committedMetadata: p.metadata ?? '',
          })),
        })),
      },
      (r) => r.topics[0]?.partitions[0]?.errorCode ?? 0,
      this.deadline(options.timeoutMs),
    );
    return res.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, error: errorOf(p.errorCode) })),
    );
  }

  /** OffsetDelete: forgets a group's committed offsets of the given partitions, which the group must not consume. */
  async deleteConsumerGroupOffsets(
    groupId: string,
    partitions: TopicPartition[],
    options: AdminCallOptions = {},
  ): Promise<PartitionResult[]> {
    const unrepresentable = unrepresentableGroup(groupId);
    if (unrepresentable !== null) throw unrepresentable;
    const res = await this.coordinatorCall<OffsetDeleteResponse>(
      groupId,
      ApiKey.OFFSET_DELETE,
      {
        groupId,
        topics: [...byTopic(partitions)].map(([name, ps]) => ({
          name,
          partitions: ps.map((p) => ({ partitionIndex: p.partition })),
        })),
      },
      (r) => r.errorCode,
      this.deadline(options.timeoutMs),
    );
    if (res.errorCode !== 0) throw new KafkaProtocolError(res.errorCode, `OffsetDelete of group ${groupId}`);
    return res.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, error: errorOf(p.errorCode) })),
    );
  }

  /**
   * AlterUserScramCredentials: sets (password given) or deletes (no password) users' SCRAM credentials. The
   * password is salted and hashed here, as Kafka's admin client does; only the salted password travels.
   */
  async alterUserScramCredentials(
    changes: { user: string; mechanism: ScramMechanismName; password?: string; iterations?: number }[],
  ): Promise<{ user: string; error: KafkaProtocolError | null }[]> {
    const type = (m: ScramMechanismName): number => (m === 'SCRAM-SHA-256' ? 1 : 2);
    const upsertions = changes
      .filter((c) => c.password !== undefined)
      .map((c) => {
        const salt = randomBytes(32);
        const iterations = c.iterations ?? 4096;
        const sha = c.mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
        const saltedPassword = pbkdf2Sync(c.password!, salt, iterations, sha === 'sha256' ? 32 : 64, sha);
        return { name: c.user, mechanism: type(c.mechanism), iterations, salt, saltedPassword };
      });
    const deletions = changes
      .filter((c) => c.password === undefined)
      .map((c) => ({ name: c.user, mechanism: type(c.mechanism) }));
    const res = await this.toController<AlterUserScramCredentialsResponse>(
      ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
      { deletions, upsertions },
      (r) => r.results.map((x) => x.errorCode),
    );
    return res.results.map((r) => ({
      user: r.user,
      error:
        r.errorCode === ErrorCode.NONE
          ? null
          : new KafkaProtocolError(r.errorCode, r.errorMessage ?? undefined),
    }));
  }

  /** DescribeUserScramCredentials: mechanisms and iterations of the named users (all users when none named). */
  async describeUserScramCredentials(users?: string[]): Promise<
    {
      user: string;
      error: KafkaProtocolError | null;
      credentials: { mechanism: ScramMechanismName; iterations: number }[];
    }[]
  > {
    const res = await this.toController<DescribeUserScramCredentialsResponse>(
      ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
      { users: users === undefined ? null : users.map((name) => ({ name })) },
      (r) => [r.errorCode],
    );
    if (res.errorCode !== ErrorCode.NONE)
      throw new KafkaProtocolError(res.errorCode, res.errorMessage ?? undefined);
    return res.results.map((r) => ({
      user: r.user,
      error:
        r.errorCode === ErrorCode.NONE
          ? null
          : new KafkaProtocolError(r.errorCode, r.errorMessage ?? undefined),
      credentials: r.credentialInfos.map((c) => ({
        mechanism: c.mechanism === 1 ? ('SCRAM-SHA-256' as const) : ('SCRAM-SHA-512' as const),
        iterations: c.iterations,
      })),
    }));
  }

  /** CreateAcls: one error (or null) per binding, in order. */
  async createAcls(bindings: readonly AclBinding[]): Promise<(KafkaProtocolError | null)[]> {
    const res = await this.toController<CreateAclsResponse>(
      ApiKey.CREATE_ACLS,
      {
        creations: bindings.map(({ pattern, entry }) => ({
          resourceType: pattern.resourceType,
          resourceName: pattern.name,
          resourcePatternType: pattern.patternType,
          principal: entry.principal,
          host: entry.host,
          operation: entry.operation,
          permissionType: entry.permissionType,
        })),
      },
      () => [],
    );
    return res.results.map((r) =>
      r.errorCode === ErrorCode.NONE
        ? null
        : new KafkaProtocolError(r.errorCode, r.errorMessage ?? undefined),
    );
  }

  /** DescribeAcls: the bindings the filter matches; a failed request throws its error. */
  async describeAcls(filter: AclBindingFilter): Promise<AclBinding[]> {
    const res = await this.toController<DescribeAclsResponse>(
      ApiKey.DESCRIBE_ACLS,
      {
        resourceTypeFilter: filter.resourceType,
        resourceNameFilter: filter.name,
        patternTypeFilter: filter.patternType,
        principalFilter: filter.principal,
        hostFilter: filter.host,
        operation: filter.operation,
        permissionType: filter.permissionType,
      },
      () => [],
    );
    if (res.errorCode !== ErrorCode.NONE)
      throw new KafkaProtocolError(res.errorCode, res.errorMessage ?? undefined);
    return res.resources.flatMap((r) =>
      r.acls.map((a) => ({
        pattern: { resourceType: r.resourceType, name: r.resourceName, patternType: r.patternType },
        entry: {
          principal: a.principal,
          host: a.host,
          operation: a.operation,
          permissionType: a.permissionType,
        },
      })),
    );
  }

  /** DeleteAcls: per filter, the bindings deleted or the filter's error. */
  async deleteAcls(
    filters: readonly AclBindingFilter[],
  ): Promise<{ error: KafkaProtocolError | null; deleted: AclBinding[] }[]> {
    const res = await this.toController<DeleteAclsResponse>(
      ApiKey.DELETE_ACLS,
      {
        filters: filters.map((f) => ({
          resourceTypeFilter: f.resourceType,
          resourceNameFilter: f.name,
          patternTypeFilter: f.patternType,
          principalFilter: f.principal,
          hostFilter: f.host,
          operation: f.operation,
          permissionType: f.permissionType,
        })),
      },
      () => [],
    );
    return res.filterResults.map((r) => ({
      error:
        r.errorCode === ErrorCode.NONE
          ? null
          : new KafkaProtocolError(r.errorCode, r.errorMessage ?? undefined),
      deleted: r.matchingAcls.map((m) => ({
        pattern: { resourceType: m.resourceType, name: m.resourceName, patternType: m.patternType },
        entry: {
          principal: m.principal,
          host: m.host,
          operation: m.operation,
          permissionType: m.permissionType,
        },
      })),
    }));
  }

  /** AlterClientQuotas: sets or removes quotas of each entity; one error (or null) per entity, in order. */
  async alterClientQuotas(
    entries: { entity: ClientQuotaEntity; ops: ClientQuotaOp[] }[],
    options: { validateOnly?: boolean } = {},
  ): Promise<{ entity: ClientQuotaEntity; error: KafkaProtocolError | null }[]> {
    const res = await this.toController<AlterClientQuotasResponse>(
      ApiKey.ALTER_CLIENT_QUOTAS,
      {
        entries: entries.map((e) => ({
          entity: quotaEntityParts(e.entity),
          ops: e.ops.map((op) => ({ key: op.key, value: op.value ?? 0, remove: op.value === null })),
        })),
        validateOnly: options.validateOnly ?? false,
      },
      () => [],
    );
    return res.entries.map((r) => ({
      entity: quotaEntityOf(r.entity),
      error:
        r.errorCode === ErrorCode.NONE
          ? null
          : new KafkaProtocolError(r.errorCode, r.errorMessage ?? undefined),
    }));
  }

  /** DescribeClientQuotas: the entities the filter matches, with their quota values. */
  async describeClientQuotas(
    components: ClientQuotaFilterComponent[],
    options: { strict?: boolean } = {},
  ): Promise<{ entity: ClientQuotaEntity; values: Record<string, number> }[]> {
    const res = await this.toController<DescribeClientQuotasResponse>(
      ApiKey.DESCRIBE_CLIENT_QUOTAS,
      {
        components: components.map((c) => ({
          entityType: c.entityType,
          matchType: c.match === 'any' ? 2 : c.match.name === null ? 1 : 0,
          match: c.match === 'any' ? null : c.match.name,
        })),
        strict: options.strict ?? false,
      },
      (r) => [r.errorCode],
    );
    if (res.errorCode !== ErrorCode.NONE)
      throw new KafkaProtocolError(res.errorCode, res.errorMessage ?? undefined);
    return (res.entries ?? []).map((e) => ({
      entity: quotaEntityOf(e.entity),
      values: Object.fromEntries(e.values.map((v) => [v.key, v.value])),
    }));
  }

  /**
   * Closes the client, as Kafka's Admin.close(Duration): calls made from now on fail with a RequestTimeoutError
   * (Kafka's TimeoutException), the calls in progress have up to `timeoutMs` to finish (no limit by default: each
   * ends by its own deadline) and those still running then fail with a RequestTimeoutError; 0 fails them at once.
   * Then every connection is closed. A negative timeout is refused (RangeError), as Kafka's
   * IllegalArgumentException.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? Number.POSITIVE_INFINITY;
    checkCloseTimeout(timeoutMs);
    await this.calls.close(timeoutMs);
    await this.cluster.close();
  }
}

export { KafkaClientError };
