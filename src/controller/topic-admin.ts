// Topic administration in the cluster's store, as Kafka's AdminZkClient does it: CreateTopics writes the
// assignment and the configs, DeleteTopics marks topics under /admin/delete_topics, CreatePartitions extends
// an assignment. The controller notices these writes through its watches and does the rest (partition states,
// LeaderAndIsr, UpdateMetadata, StopReplica).
//
// Any broker may run these calls, the controller or not. Results are Kafka error codes with messages, one per
// topic, never exceptions; configs arrive already validated by the caller as a string map.
//
// State: none of its own. Each call reads what it needs from the store; concurrent calls from several brokers
// are settled by the store (a create that finds the node answers TOPIC_ALREADY_EXISTS, a conditional set that
// finds a newer version retries).

import type { BrokerId, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/messages/codec-support.js';
import { readLiveBrokers } from './broker-registration.js';
import { newUuid, type Random, systemRandom } from './random.js';
import { type ApiError, assignReplicas, type BrokerRack } from './replica-assignment.js';
import type { CoordinationStore, Op } from './store/store.js';
import { hasCollisionChars, topicNameProblem, topicsCollide } from './topic-names.js';
import {
  DELETE_TOPICS_PATH,
  decodeTopicAssignment,
  deleteTopicPath,
  encodeEntityConfig,
  encodeTopicAssignment,
  type ReplicaAssignment,
  TOPICS_PATH,
  topicConfigPath,
  topicPath,
} from './zk-layout/index.js';

/** A bound Kafka does not have: a topic's assignment must fit in one znode (about 1 MiB). */
export const PARTITIONS_PER_TOPIC_MAX = 50_000;

export interface TopicDefaults {
  /** num.partitions */
  readonly numPartitions: number;
  /** default.replication.factor */
  readonly replicationFactor: number;
  /** delete.topic.enable */
  readonly deleteTopicEnable: boolean;
}

export interface NewTopic {
  readonly name: string;
  /** -1: num.partitions. */
  readonly numPartitions: number;
  /** -1: default.replication.factor. */
  readonly replicationFactor: number;
  /** Explicit replicas per partition; when non-empty, numPartitions and replicationFactor must be -1. */
  readonly assignments: readonly { readonly partitionIndex: number; readonly brokerIds: readonly number[] }[];
  /** Topic configs, validated by the caller. */
  readonly configs: Readonly<Record<string, string>>;
}

export interface CreateTopicResult {
  readonly name: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  /** Kafka's Uuid text; the zero id on error. */
  readonly topicId: string;
  /** Resolved counts, -1 on error. */
  readonly numPartitions: number;
  readonly replicationFactor: number;
}

export interface DeleteTopicResult {
  readonly name: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly topicId: string;
}

export interface NewPartitions {
  readonly name: string;
  /** The new total partition count. */
  readonly count: number;
  /** Replicas of each new partition, or null for an automatic assignment. */
  readonly assignments: readonly (readonly number[])[] | null;
}

export interface CreatePartitionsResult {
  readonly name: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** A change a call wrote, and what shows it done in a broker's metadata (Kafka's delayed admin operations). */
export type TopicChange =
  /** Done when the topic, with this id, has a leader for every partition. */
  | { readonly kind: 'created'; readonly topic: string; readonly topicId: string }
  /** Done when the topic has `count` partitions, each with a leader. */
  | { readonly kind: 'partitions'; readonly topic: string; readonly count: number }
  /** Done when the topic with this id is gone. */
  | { readonly kind: 'deleted'; readonly topic: string; readonly topicId: string };

/** What waits for written topics to take effect (the broker's PropagationWaiter, src/broker/cluster). */
export interface PropagationWaiter {
  sync(topics: readonly string[]): Promise<void>;
  /**
   * Waits until this broker's metadata shows every change done, or until `timeoutMs` has passed; answers the
   * topics whose change it shows (Kafka's DelayedCreatePartitions and DelayedDeleteTopics).
   */
  awaitChanges(changes: readonly TopicChange[], timeoutMs: number): Promise<ReadonlySet<string>>;
}

export interface TopicAdminOptions {
  readonly store: CoordinationStore;
  readonly defaults: TopicDefaults;
  readonly random?: Random;
  /**
   * When set, calls that wrote something resolve only after the controller has propagated the change: within the
   * request's timeout when the call names one (see `awaitWritten`), else when the controller says it is done.
   */
  readonly propagation?: PropagationWaiter;
}

/** What Kafka answers for a topic whose change the request's timeout did not see done; the change goes on. */
const TIMED_OUT = { errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: null };

type Outcome<T> = ({ ok: true } & T) | ({ ok: false } & ApiError);

export class TopicAdmin {
  private readonly store: CoordinationStore;
  private readonly random: Random;

  constructor(private readonly options: TopicAdminOptions) {
    this.store = options.store;
    this.random = options.random ?? systemRandom;
  }

  /**
   * `timeoutMs`, a CreateTopics request's: how long to wait for the topics to have leaders in this broker's
   * metadata; topics not there by then are answered REQUEST_TIMED_OUT (their creation goes on). 0 or less answers
   * at once, REQUEST_TIMED_OUT for every topic written, as Kafka does. Without it (the broker's own calls), the call
   * waits until the controller is done.
   */
  async createTopics(
    topics: readonly NewTopic[],
    validateOnly: boolean,
    timeoutMs?: number,
  ): Promise<CreateTopicResult[]> {
    const results: CreateTopicResult[] = [];
    const names = topics.map((t) => t.name);
    const duplicates = new Set(names.filter((n, i) => names.indexOf(n) !== i));
    const context = await this.readClusterView();
    const written: string[] = [];
    for (const topic of topics) {
      if (duplicates.has(topic.name)) {
        results.push(createFailure(topic.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic in the request.'));
        continue;
      }
      if (!context.ok) {
        results.push(createFailure(topic.name, context.errorCode, context.errorMessage));
        continue;
      }
      const result = await this.createOne(topic, validateOnly, context);
      if (result.errorCode === ErrorCode.NONE && !validateOnly) {
        context.topics.add(topic.name);
        written.push(topic.name);
      }
      results.push(result);
    }
    const changes = results.flatMap((r): TopicChange[] =>
      written.includes(r.name) ? [{ kind: 'created', topic: r.name, topicId: r.topicId }] : [],
    );
    return withTimeouts(results, await this.awaitWritten(changes, timeoutMs));
  }

  /** `timeoutMs`, a DeleteTopics request's: as for createTopics, waiting for the topics to leave the metadata. */
  async deleteTopics(names: readonly string[], timeoutMs?: number): Promise<DeleteTopicResult[]> {
    const results: DeleteTopicResult[] = [];
    const changes: TopicChange[] = [];
    for (const name of names) {
      const result = await this.deleteOne(name);
      if (result.errorCode === ErrorCode.NONE)
        changes.push({ kind: 'deleted', topic: name, topicId: result.topicId });
      results.push(result);
    }
    return withTimeouts(results, await this.awaitWritten(changes, timeoutMs));
  }

  /**
   * Whether the coordination store holds the topic (created, maybe not yet in any broker's metadata); null when the
   * store cannot answer.
   */
  async topicWritten(name: string): Promise<boolean | null> {
    const node = await this.store.exists(topicPath(name));
    return node.ok ? node.value !== null : null;
  }

  /** `timeoutMs`, a CreatePartitions request's: as for createTopics, waiting for the new partitions' leaders. */
  async createPartitions(
    requests: readonly NewPartitions[],
    validateOnly: boolean,
    timeoutMs?: number,
  ): Promise<CreatePartitionsResult[]> {
    const results: CreatePartitionsResult[] = [];
    const written: string[] = [];
    const names = requests.map((r) => r.name);
    const duplicates = new Set(names.filter((n, i) => names.indexOf(n) !== i));
    for (const request of requests) {
      if (duplicates.has(request.name)) {
        results.push({
          name: request.name,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: 'Duplicate topic in the request.',
        });
        continue;
      }
      let outcome = await this.addPartitionsOnce(request, validateOnly);
      // A conditional write that lost a race with another writer is tried again on fresh data.
      if (!outcome.ok && outcome.errorCode === RETRY)
        outcome = await this.addPartitionsOnce(request, validateOnly);
      if (!outcome.ok && outcome.errorCode === RETRY) {
        outcome = {
          ok: false,
          errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
          errorMessage: 'The topic kept changing.',
        };
      }
      if (outcome.ok && !validateOnly) written.push(request.name);
      results.push(
        outcome.ok
          ? { name: request.name, errorCode: ErrorCode.NONE, errorMessage: null }
          : { name: request.name, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage },
      );
    }
    const changes = requests.flatMap((r): TopicChange[] =>
      written.includes(r.name) ? [{ kind: 'partitions', topic: r.name, count: r.count }] : [],
    );
    return withTimeouts(results, await this.awaitWritten(changes, timeoutMs));
  }

  /**
   * Waits for written changes to take effect: without a timeout until the controller says it is done; with one,
   * as Kafka's ZooKeeper-mode broker does, until this broker's metadata shows them (a deleted topic is gone from
   * it once the controller has told the brokers, before every replica is deleted) or the timeout passes. Answers
   * the topics whose change was not seen done.
   */
  private async awaitWritten(
    changes: readonly TopicChange[],
    timeoutMs?: number,
  ): Promise<ReadonlySet<string>> {
    const topics = changes.map((c) => c.topic);
    // Kafka's ZkAdminManager does not wait at all for a timeout of 0 or less, and answers every topic it wrote
    // REQUEST_TIMED_OUT (librdkafka, whose default operation timeout is 0, takes that code for success).
    if (timeoutMs !== undefined && timeoutMs <= 0) return new Set(topics);
    const propagation = this.options.propagation;
    if (changes.length === 0 || propagation === undefined) return new Set();
    if (timeoutMs === undefined) {
      await propagation.sync(topics);
      return new Set();
    }
    const done = await propagation.awaitChanges(changes, timeoutMs);
    return new Set(topics.filter((t) => !done.has(t)));
  }

  private async readClusterView(): Promise<Outcome<ClusterView>> {
    const [brokers, topics, deleting] = await Promise.all([
      readLiveBrokers(this.store),
      this.store.children(TOPICS_PATH),
      this.store.children(DELETE_TOPICS_PATH),
    ]);
    if (!brokers.ok || !topics.ok || !deleting.ok) {
      return {
        ok: false,
        errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: 'The cluster metadata store is not available.',
      };
    }
    const racks: BrokerRack[] = [...brokers.brokers.values()].map((b) => ({
      id: b.registration.brokerId,
      rack: b.registration.rack,
    }));
    return {
      ok: true,
      brokers: racks.sort((a, b) => a.id - b.id),
      topics: new Set(topics.value),
      deleting: new Set(deleting.ok ? deleting.value : []),
    };
  }

  private async createOne(
    topic: NewTopic,
    validateOnly: boolean,
    view: ClusterView,
  ): Promise<CreateTopicResult> {
    const checked = this.checkNewTopic(topic, view);
    if (!checked.ok) return createFailure(topic.name, checked.errorCode, checked.errorMessage);
    const assignment = checked.assignment;
    const topicId = newUuid(this.random);
    const first = assignment.get(0 as PartitionId)!;
    const success: CreateTopicResult = {
      name: topic.name,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      topicId,
      numPartitions: assignment.size,
      replicationFactor: first.length,
    };
    // Kafka answers a validation with the zero id: no topic was made.
    if (validateOnly) return { ...success, topicId: ZERO_UUID };
    const partitions = new Map<PartitionId, ReplicaAssignment>();
    for (const [p, replicas] of assignment)
      partitions.set(p, { replicas, addingReplicas: [], removingReplicas: [] });
    const configPath = topicConfigPath(topic.name);
    const configExists = await this.store.exists(configPath);
    if (!configExists.ok)
      return createFailure(
        topic.name,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        'The cluster metadata store is not available.',
      );
    const configData = encodeEntityConfig(topic.configs);
    // Configs and assignment in one transaction, so that the controller never sees a topic without its configs
    // (Kafka writes them one after the other; a crash in between leaves a config without a topic).
    const ops: Op[] = [
      configExists.value === null
        ? { op: 'create', path: configPath, data: configData, mode: 'persistent' }
        : { op: 'set', path: configPath, data: configData, version: configExists.value.version },
      {
        op: 'create',
        path: topicPath(topic.name),
        data: encodeTopicAssignment({ topicId, partitions }),
        mode: 'persistent',
      },
    ];
    const written = await this.store.multi(ops);
    if (written.ok) return success;
    if (written.code === 'NODEEXISTS' && written.failedOpIndex === 1) {
      return createFailure(
        topic.name,
        ErrorCode.TOPIC_ALREADY_EXISTS,
        `Topic '${topic.name}' already exists.`,
      );
    }
    if (written.code === 'BADARGUMENTS') {
      return createFailure(
        topic.name,
        ErrorCode.INVALID_REQUEST,
        'The topic assignment is too large to store.',
      );
    }
    return createFailure(
      topic.name,
      ErrorCode.UNKNOWN_SERVER_ERROR,
      `Writing the topic failed: ${written.code}.`,
    );
  }

  /** Kafka's checks, in Kafka's order, and the replica assignment. */
  private checkNewTopic(
    topic: NewTopic,
    view: ClusterView,
  ): Outcome<{ assignment: Map<PartitionId, BrokerId[]> }> {
    const name = topic.name;
    const problem = topicNameProblem(name);
    if (problem !== null)
      return { ok: false, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: problem };
    if (view.deleting.has(name)) {
      return {
        ok: false,
        errorCode: ErrorCode.TOPIC_ALREADY_EXISTS,
        errorMessage: `Topic '${name}' is marked for deletion.`,
      };
    }
    if (view.topics.has(name)) {
      return {
        ok: false,
        errorCode: ErrorCode.TOPIC_ALREADY_EXISTS,
        errorMessage: `Topic '${name}' already exists.`,
      };
    }
    if (hasCollisionChars(name)) {
      const colliding = [...view.topics].filter((t) => topicsCollide(name, t));
      if (colliding.length > 0) {
        return {
          ok: false,
          errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
          errorMessage: `Topic '${name}' collides with existing topics: ${colliding.join(', ')}`,
        };
      }
    }
    if (topic.assignments.length > 0) {
      if (topic.numPartitions !== -1 || topic.replicationFactor !== -1) {
        return {
          ok: false,
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage:
            'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.',
        };
      }
      return checkExplicitAssignment(topic.assignments, view);
    }
    const numPartitions =
      topic.numPartitions === -1 ? this.options.defaults.numPartitions : topic.numPartitions;
    const replicationFactor =
      topic.replicationFactor === -1 ? this.options.defaults.replicationFactor : topic.replicationFactor;
    if (numPartitions > PARTITIONS_PER_TOPIC_MAX) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage: `Number of partitions must be at most ${PARTITIONS_PER_TOPIC_MAX}.`,
      };
    }
    const assigned = assignReplicas(
      view.brokers,
      { partitionCount: numPartitions, replicationFactor },
      this.random,
    );
    return assigned.ok ? { ok: true, assignment: assigned.assignment } : assigned;
  }

  private async deleteOne(name: string): Promise<DeleteTopicResult> {
    const fail = (errorCode: number, errorMessage: string): DeleteTopicResult => ({
      name,
      errorCode,
      errorMessage,
      topicId: ZERO_UUID,
    });
    if (topicNameProblem(name) !== null) {
      return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    }
    const node = await this.store.get(topicPath(name));
    if (!node.ok) {
      return node.code === 'NONODE'
        ? fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.')
        : fail(ErrorCode.UNKNOWN_SERVER_ERROR, 'The cluster metadata store is not available.');
    }
    if (!this.options.defaults.deleteTopicEnable) {
      return fail(ErrorCode.TOPIC_DELETION_DISABLED, 'Topic deletion is disabled.');
    }
    const decoded = decodeTopicAssignment(node.value.data);
    const topicId = decoded.ok ? (decoded.value.topicId ?? ZERO_UUID) : ZERO_UUID;
    const marked = await this.store.create(deleteTopicPath(name), new Uint8Array(0), 'persistent');
    // A topic already marked is reported as a success, as Kafka does, so that repeated deletes all succeed.
    if (!marked.ok && marked.code !== 'NODEEXISTS') {
      return fail(ErrorCode.UNKNOWN_SERVER_ERROR, `Marking the topic for deletion failed: ${marked.code}.`);
    }
    return { name, errorCode: ErrorCode.NONE, errorMessage: null, topicId };
  }

  private async addPartitionsOnce(request: NewPartitions, validateOnly: boolean): Promise<Outcome<object>> {
    const name = request.name;
    const unknown = {
      ok: false as const,
      errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      errorMessage: `The topic '${name}' does not exist.`,
    };
    if (topicNameProblem(name) !== null) return unknown;
    const [node, deleting, brokers] = await Promise.all([
      this.store.get(topicPath(name)),
      this.store.exists(deleteTopicPath(name)),
      readLiveBrokers(this.store),
    ]);
    if (!node.ok && node.code === 'NONODE') return unknown;
    if (!node.ok || !deleting.ok || !brokers.ok) {
      return {
        ok: false,
        errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
        errorMessage: 'The cluster metadata store is not available.',
      };
    }
    if (deleting.value !== null) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION,
        errorMessage: `The topic '${name}' is queued for deletion.`,
      };
    }
    const decoded = decodeTopicAssignment(node.value.data);
    if (!decoded.ok)
      return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: decoded.error.message };
    const existing = decoded.value;
    const oldCount = existing.partitions.size;
    for (const a of existing.partitions.values()) {
      if (a.addingReplicas.length > 0 || a.removingReplicas.length > 0) {
        return {
          ok: false,
          errorCode: ErrorCode.REASSIGNMENT_IN_PROGRESS,
          errorMessage: `A partition reassignment is in progress for the topic '${name}'.`,
        };
      }
    }
    if (request.count === oldCount) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage: `Topic already has ${oldCount} partitions.`,
      };
    }
    if (request.count < oldCount) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage:
          `Topic currently has ${oldCount} partitions, ` +
          `which is higher than the requested ${request.count}.`,
      };
    }
    if (request.count > PARTITIONS_PER_TOPIC_MAX) {
      return {
        ok: false,
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage: `Number of partitions must be at most ${PARTITIONS_PER_TOPIC_MAX}.`,
      };
    }
    const racks: BrokerRack[] = [...brokers.brokers.values()]
      .map((b) => ({ id: b.registration.brokerId, rack: b.registration.rack }))
      .sort((a, b) => a.id - b.id);
    const partition0 = existing.partitions.get(0 as PartitionId)?.replicas ?? [];
    const added = addedAssignment(request, oldCount, partition0, racks, this.random);
    if (!added.ok) return added;
    if (validateOnly) return { ok: true };
    const partitions = new Map(existing.partitions);
    for (const [p, replicas] of added.assignment)
      partitions.set(p, { replicas, addingReplicas: [], removingReplicas: [] });
    const topicId = existing.topicId ?? newUuid(this.random);
    const written = await this.store.set(
      topicPath(name),
      encodeTopicAssignment({ topicId, partitions }),
      node.value.stat.version,
    );
    if (written.ok) return { ok: true };
    if (written.code === 'BADVERSION') return { ok: false, errorCode: RETRY, errorMessage: '' };
    if (written.code === 'NONODE') return unknown;
    return {
      ok: false,
      errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
      errorMessage: `Writing the topic failed: ${written.code}.`,
    };
  }
}

/** Internal marker for "lost a conditional-write race"; never returned to a caller. */
const RETRY = -1000;

interface ClusterView {
  readonly brokers: readonly BrokerRack[];
  readonly topics: Set<string>;
  readonly deleting: Set<string>;
}

function createFailure(name: string, errorCode: number, errorMessage: string): CreateTopicResult {
  return { name, errorCode, errorMessage, topicId: ZERO_UUID, numPartitions: -1, replicationFactor: -1 };
}

function invalidAssignment(errorMessage: string): { ok: false } & ApiError {
  return { ok: false, errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage };
}

function checkExplicitAssignment(
  assignments: NewTopic['assignments'],
  view: ClusterView,
): Outcome<{ assignment: Map<PartitionId, BrokerId[]> }> {
  const out = new Map<PartitionId, BrokerId[]>();
  const live = new Set(view.brokers.map((b) => b.id as number));
  const sizes = new Set<number>();
  for (const { partitionIndex, brokerIds } of assignments) {
    if (brokerIds.length === 0) return invalidAssignment(`Partition ${partitionIndex} has no replicas.`);
    if (new Set(brokerIds).size !== brokerIds.length) {
      return invalidAssignment(
        `Duplicate replica assignment found: partition ${partitionIndex} lists [${brokerIds.join(', ')}]`,
      );
    }
    if (out.has(partitionIndex as PartitionId) || partitionIndex < 0) {
      return invalidAssignment('partitions should be a consecutive 0-based integer sequence');
    }
    const missing = brokerIds.find((b) => !live.has(b));
    if (missing !== undefined) {
      return invalidAssignment(
        `The manual partition assignment includes broker ${missing}, but no broker with that ID is registered.`,
      );
    }
    sizes.add(brokerIds.length);
    out.set(partitionIndex as PartitionId, brokerIds as BrokerId[]);
  }
  if (sizes.size !== 1) return invalidAssignment('All partitions should have the same number of replicas');
  for (let p = 0; p < out.size; p++) {
    if (!out.has(p as PartitionId))
      return invalidAssignment('partitions should be a consecutive 0-based integer sequence');
  }
  if (out.size > PARTITIONS_PER_TOPIC_MAX) {
    return {
      ok: false,
      errorCode: ErrorCode.INVALID_PARTITIONS,
      errorMessage: `Number of partitions must be at most ${PARTITIONS_PER_TOPIC_MAX}.`,
    };
  }
  return { ok: true, assignment: out };
}

/** The replicas of the partitions CreatePartitions adds: the request's, checked as Kafka does, or assigned. */
function addedAssignment(
  request: NewPartitions,
  oldCount: number,
  partition0: readonly BrokerId[],
  brokers: readonly BrokerRack[],
  random: Random,
): Outcome<{ assignment: Map<PartitionId, BrokerId[]> }> {
  const increase = request.count - oldCount;
  if (request.assignments === null) {
    // Kafka starts the round-robin at the broker that leads partition 0, so the new partitions continue the
    // existing pattern instead of starting at a random broker.
    const startIndex = Math.max(
      0,
      brokers.findIndex((b) => b.id >= (partition0[0] ?? 0)),
    );
    const assigned = assignReplicas(
      brokers,
      {
        partitionCount: increase,
        replicationFactor: partition0.length,
        startPartitionId: oldCount,
        fixedStartIndex: startIndex,
      },
      random,
    );
    return assigned.ok ? { ok: true, assignment: assigned.assignment } : assigned;
  }
  if (request.assignments.length !== increase) {
    return invalidAssignment(
      `Increasing the number of partitions by ${increase} but ${request.assignments.length} assignments provided.`,
    );
  }
  const live = new Set(brokers.map((b) => b.id as number));
  const out = new Map<PartitionId, BrokerId[]>();
  const mismatched: number[] = [];
  const mismatchedFactors: number[] = [];
  for (let i = 0; i < request.assignments.length; i++) {
    const replicas = request.assignments[i]!;
    const partition = oldCount + i;
    const unknown = replicas.filter((b) => !live.has(b));
    if (unknown.length > 0)
      return invalidAssignment(`Unknown broker(s) in replica assignment: ${unknown.join(', ')}.`);
    if (replicas.length === 0 || new Set(replicas).size !== replicas.length) {
      return invalidAssignment(
        `Duplicate brokers not allowed in replica assignment: ${replicas.join(', ')} for partition id ${partition}.`,
      );
    }
    if (replicas.length !== partition0.length) {
      mismatched.push(partition);
      mismatchedFactors.push(replicas.length);
    }
    out.set(partition as PartitionId, replicas as BrokerId[]);
  }
  if (mismatched.length > 0) {
    return invalidAssignment(
      `Inconsistent replication factor between partitions, partition 0 has ${partition0.length} while partitions [${mismatched.join(', ')}] have replication factors [${mismatchedFactors.join(', ')}], respectively.`,
    );
  }
  return { ok: true, assignment: out };
}

/** The results with REQUEST_TIMED_OUT for the topics in `timedOut` (they succeeded so far). */
function withTimeouts<R extends { readonly name: string; readonly errorCode: number }>(
  results: R[],
  timedOut: ReadonlySet<string>,
): R[] {
  if (timedOut.size === 0) return results;
  return results.map((r) =>
    r.errorCode === ErrorCode.NONE && timedOut.has(r.name) ? { ...r, ...TIMED_OUT } : r,
  );
}
