// One stream thread: a group member (its own consumer in the group named by application.id), a producer for
// its sinks and changelogs, a restore consumer, and the tasks of the partitions the group gave it.
//
// Loop: poll -> queue each record in its task's partition group -> process each task's queued records in
// timestamp order across its partitions while it is ready (partition-group.ts: every partition has a record, or
// an empty one is known to have nothing more; max.task.idle.ms) -> wall-clock punctuation -> commit every
// commit.interval.ms. A partition whose task holds buffered.records.per.partition records is paused until
// processing takes it below again. Queued records of a task that closes are dropped (never committed).
// Commit (at_least_once): wait until the producer has every record sent so far acknowledged, flush the stores'
// engines, commit the consumed offsets, then write the checkpoint files of the persistent stores. Whatever the
// thread processed after its last commit is processed again after a crash, as Kafka's at-least-once does.
//
// Exactly-once v2 (processing.guarantee=exactly_once_v2, KIP-447): the thread's producer is transactional, with
// Kafka Streams' transactional.id `<application.id>-<processId>-<thread index>`; a transaction begins with the
// first record sent after a commit, and a commit sends the consumed offsets into it (sendOffsetsToTransaction with
// the consumer's group metadata, so a member the group moved on from is fenced by its generation) and commits
// it. The consumers read with read_committed, restoration included, so nothing of an aborted transaction reaches
// a store or a task. A failure aborts the open transaction. The producer's initTransactions() runs beside the
// polls (the group does not wait for it); nothing is processed before it completes. A task migration (the group
// moved on without this member, or the producer was fenced) drops every task, replaces a fenced producer, and
// rejoins the group, as Kafka's StreamThread.handleTaskMigrated. Local state may be ahead of what was committed, so
// under EOS, as in Kafka, no checkpoint file exists while a task runs: it is deleted once the task's stores are
// restored and written only when the task is closed cleanly (after a commit); a task that finds no checkpoint
// under EOS (its last run ended in a crash) wipes its stores and restores them from the changelog.
//
// Rebalances are cooperative (KIP-429), with the streams assignor (streams-assignor.ts: tasks placed per
// instance, sticky, with standby replicas; equal partition numbers of co-partitioned topics form one task): a
// rebalance revokes only the partitions of tasks that move away; the thread commits and closes just those tasks
// (the others keep their stores open and go on processing after the rebalance) and its consumer rejoins so
// that the follow-up rebalance hands them to their new owner. On assignment it hands its standby tasks to the
// instance's standby updater, creates the new active tasks (releasing a standby of the same task first, whose
// checkpoint the active then restores from), restores their stores from the changelogs and only then
// processes them.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer, type ConsumerRecord } from '../../client/consumer.js';
import { KafkaClientError, KafkaProtocolError } from '../../client/errors.js';
import { Producer } from '../../client/producer.js';
import { type TopicPartition, tpKey } from '../../client/requests.js';
import { isFatalTransactionError } from '../../client/transactions.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { ResolvedConfig } from '../config.js';
import { FailedProcessingError, StreamsError, taskError } from '../errors.js';
import type { Header, StateRestoreListener } from '../processor.js';
import {
  type ProducedRecord,
  type ProductionErrorHandlerContext,
  sendErrorKind,
} from '../production-exception-handler.js';
import { type BytesKeyValueStore, wipeCorruptedState } from '../state/bytes-store.js';
import { CacheBudget } from '../state/record-cache.js';
import { restoreInto } from '../state/store-stack.js';
import type { StateStore } from '../state/stores.js';
import type { Topology } from '../topology.js';
import {
  checkpointPath,
  deleteCheckpoint,
  readCheckpoint,
  taskOffsetSums,
  writeCheckpoint,
} from './checkpoint.js';
import { openEngine } from './engines.js';
import { changelogTopicName, repartitionTopicName, type TopicLayout } from './internal-topics.js';
import { PartitionGroup } from './partition-group.js';
import { partitionKey, topicPartitionOfKey } from './partition-key.js';
import { RepartitionPurger } from './repartition-purger.js';
import type { HandedStore, StandbyUpdater } from './standby-updater.js';
import { type AssignmentInfo, SHUTDOWN_REQUESTED, StreamsPartitionAssignor } from './streams-assignor.js';
import { type RecordCollector, Task } from './task.js';

/** Unacknowledged sends after which the loop waits for the producer before polling again. */
const SENDS_IN_FLIGHT_MAX = 20_000;
const POLL_TIMEOUT_MS = 100;

/** One store's restoration: its task, changelog partition and engine, and where it starts (null: the first offset). */
interface RestoreTarget {
  taskId: string;
  tp: TopicPartition;
  store: string;
  engine: BytesKeyValueStore;
  apply: (r: ConsumerRecord) => void;
  from: number | null;
}

/** A restoration under way: the offset it stops at and the records it applied. */
interface PendingRestore {
  target: RestoreTarget;
  end: number;
  restored: number;
}
/** Errors of a commit that mean the group moved on without this member (Kafka's TaskMigratedException). */
const GROUP_MOVED_CODES = new Set<number>([
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.UNKNOWN_MEMBER_ID,
  ErrorCode.FENCED_INSTANCE_ID,
  ErrorCode.REBALANCE_IN_PROGRESS,
]);

/**
 * Errors of a send or a transaction call that mean, under exactly-once, that a newer producer of the thread's
 * transactional.id took over or the coordinator aborted the transaction and bumped the epoch (a transaction that
 * outlived transaction.timeout.ms): the producer can only be closed, and Kafka Streams takes it as a task migration
 * too (RecordCollectorImpl and StreamsProducer: ProducerFenced, InvalidProducerEpoch, InvalidPidMapping,
 * OutOfOrderSequence).
 */
const PRODUCER_FENCED_CODES = new Set<number>([
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
]);

/** The Kafka error code an error carries, itself or in its causes (a send error wraps the client's). */
function errorCodeOf(e: unknown): number | undefined {
  for (let c = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++)
    if (c instanceof KafkaProtocolError) return c.code;
  return undefined;
}

export type ThreadState =
  | 'CREATED'
  | 'STARTING'
  | 'PARTITIONS_REVOKED'
  | 'PARTITIONS_ASSIGNED'
  | 'RUNNING'
  | 'PENDING_SHUTDOWN'
  | 'DEAD';

export interface ThreadHooks {
  onStateChange(thread: StreamThread, state: ThreadState): void;
  onError(thread: StreamThread, error: Error): void;
  log(message: string): void;
  /** The logger of the thread's consumers and producer (KafkaStreams.setClientLogger). */
  clientLogger?: Logger;
  /** The instance's global stores (GlobalKTable), readable by every task. */
  globalStore?(name: string): StateStore | undefined;
  /** The instance's standby tasks (num.standby.replicas); in a worker thread, this worker's. */
  standbys?: StandbyUpdater;
  /**
   * In a worker thread: closes the standbys of these tasks that other workers of the instance hold (persistent
   * stores checkpointed and closed, in-memory ones dropped), so that this thread may open the tasks' state.
   */
  releaseStandbysElsewhere?(taskIds: string[]): Promise<void>;
  /** The streams assignor's answer to this thread in a new generation (hosts of every instance). */
  onAssignmentInfo?(thread: StreamThread, info: AssignmentInfo, generationId: number): void;
  /** The group's leader answered SHUTDOWN_REQUESTED: some instance asked the whole application to stop. */
  onShutdownRequested?(thread: StreamThread): void;
  /** KafkaStreams.setGlobalStateRestoreListener: told of the active tasks' restoration. */
  restoreListener?: StateRestoreListener;
}

export class StreamThread {
  readonly name: string;
  private readonly consumer: Consumer;
  /** Replaced by a new one when it is fenced (Kafka's StreamsProducer.resetProducer). */
  private producer: Producer;
  /** Under EOS, Kafka Streams' transactional.id of this thread's producer: `<application.id>-<processId>-<index>`. */
  private readonly transactionalId: string | null;
  private readonly tasks = new Map<string, Task>();
  /** "real topic:partition" -> the task reading it. */
  private readonly taskOfPartition = new Map<string, Task>();
  /** Each task's polled records not processed yet, taken in timestamp order across its partitions. */
  private readonly queued = new Map<Task, PartitionGroup>();
  /** "real topic:partition" of the partitions paused because their task holds buffered.records.per.partition. */
  private readonly pausedPartitions = new Set<string>();
  /** "real topic:partition" -> the next offset to commit. */
  private readonly consumed = new Map<string, number>();
  /** "real topic:partition" -> the offset last committed, of the repartition topics read (for the purge). */
  private readonly committedRepartition = new Map<string, number>();
  private readonly purger: RepartitionPurger;
  /** "changelog:partition" -> the last offset acknowledged. */
  private readonly changelogOffsets = new Map<string, number>();
  /** "changelog:partition" -> last offset held by an in-memory store a standby handed over (until restored). */
  private readonly handedOffsets = new Map<string, number>();
  private sendError: Error | null = null;
  /** The task whose record's send set sendError (Kafka keeps a send error in that task's RecordCollector). */
  private sendErrorTaskId: string | null = null;
  private sendsInFlight = 0;
  private lastCommitMs = Date.now();
  private commitRequested = false;
  private running = false;
  private loop: Promise<void> | null = null;
  state: ThreadState = 'CREATED';
  /** The record caches of this thread's tasks share statestore.cache.max.bytes / num.stream.threads. */
  private readonly cacheBudget: CacheBudget | null;
  /** Records processed since start (for tests and metrics). */
  processed = 0;
  /**
   * Records its tasks dropped since start (Kafka's task-level dropped-records-total, summed over the thread's
   * tasks): a processing error answered CONTINUE, a record that failed to deserialize and was skipped, a
   * record with an invalid timestamp.
   */
  droppedRecords = 0;
  /** processing.guarantee=exactly_once_v2. */
  private readonly eos: boolean;
  /** Under EOS: a transaction is open (records sent or offsets to commit since the last commit). */
  private inTransaction = false;
  /**
   * Under EOS: initTransactions() of the current producer has completed. Until then the thread polls (it joins
   * the group, takes and restores its tasks) but processes nothing: initTransactions waits for the transaction an
   * earlier producer of the same transactional.id left open to be aborted, which takes as long as its partitions'
   * leaders take to answer (a restart during a fault), and the group must not wait for that.
   */
  private producerReady: boolean;
  /** Under EOS: initTransactions() of the current producer is under way. */
  private producerInitializing = false;
  /** Under EOS: initTransactions() failed for good (not authorized, say): the thread fails with it. */
  private producerInitError: Error | null = null;
  /** The tasks were dropped after a task migration: the consumer leaves the group and joins again (as Kafka). */
  private rejoinPending = false;
  /** The tasks the last assignment gave this thread, reported in the next subscription (stickiness). */
  private assignedActive: string[] = [];
  private assignedStandby: string[] = [];
  /** Sent in the subscription: SHUTDOWN_REQUESTED once this thread carries a SHUTDOWN_APPLICATION request. */
  private assignmentErrorCode = 0;
  /** A generation's assignment arrived in the current poll (see run()). */
  private assignmentReceived = false;
  /**
   * From the start of a join until its assignment arrives (Kafka's TaskManager.rebalanceInProgress): the tasks
   * kept through a cooperative rebalance go on processing, but are not committed, since the group would refuse
   * a commit of the generation being replaced (REBALANCE_IN_PROGRESS, a task migration under EOS).
   */
  private rebalanceInProgress = false;
  /** When this generation's warm-up replicas are probed: a rebalance is asked for then (KIP-441). */
  private probeAtMs: number | null = null;
  /** The source topics that stores are restored from (reuse.ktable.source.topics); the topology is built. */
  private readonly sourceChangelogTopics: ReadonlySet<string>;

  constructor(
    index: number,
    private readonly config: ResolvedConfig,
    private readonly topology: Topology,
    private readonly layout: TopicLayout,
    private readonly hooks: ThreadHooks,
    /** The instance's process id (a UUID, as Kafka Streams'): part of the transactional.id under EOS. */
    processId: string = randomUUID(),
  ) {
    this.name = `${config.clientId}-StreamThread-${index}`;
    const cacheBytes = Math.floor(config.cacheMaxBytes / config.numStreamThreads);
    this.cacheBudget = cacheBytes > 0 ? new CacheBudget(cacheBytes) : null;
    this.eos = config.processingGuarantee === 'exactly_once_v2';
    this.sourceChangelogTopics = new Set(topology.sourceChangelogs.values());
    this.purger = new RepartitionPurger(config, this.name, (m) => this.hooks.log(`${this.name}: ${m}`));
    this.consumer = new Consumer({
      // The properties' consumer keys first (client-configs.ts), then what Streams sets itself.
      ...config.clients.mainConsumer,
      bootstrapServers: config.bootstrapServers,
      clientId: `${this.name}-consumer`,
      ...(this.hooks.clientLogger === undefined ? {} : { logger: this.hooks.clientLogger }),
      groupId: config.applicationId,
      // A static member per thread: Kafka suffixes the configured id with the thread index to keep them unique.
      ...(config.clients.groupInstanceId === null
        ? {}
        : { groupInstanceId: `${config.clients.groupInstanceId}-${index}` }),
      enableAutoCommit: false,
      // As Kafka Streams' main consumer: source topics are the user's to create and internal ones the assignor's,
      // so a missing source topic is reported, not created by the broker with its default partition count.
      allowAutoCreateTopics: false,
      partitionAssignmentStrategy: [
        new StreamsPartitionAssignor({
          processId,
          applicationServer: config.applicationServer,
          applicationId: config.applicationId,
          numStandbyReplicas: config.numStandbyReplicas,
          acceptableRecoveryLag: config.acceptableRecoveryLag,
          maxWarmupReplicas: config.maxWarmupReplicas,
          probingRebalanceIntervalMs: config.probingRebalanceIntervalMs,
          rackAwareAssignmentTags: config.rackAwareAssignmentTags,
          clientTags: config.clientTags,
          rackAwareAssignmentStrategy: config.rackAwareAssignmentStrategy,
          rackAwareTrafficCost: config.rackAwareTrafficCost,
          rackAwareNonOverlapCost: config.rackAwareNonOverlapCost,
          latestSupportedVersion: config.assignmentLatestSupportedVersion,
          upgradeFrom: config.upgradeFrom,
          endOffsets: (tps) => this.listChangelogOffsets(tps, 'end', 'lag'),
          // As Kafka's assignor (fetchCommittedOffsets through the main consumer).
          committedOffsets: async (tps) => {
            const committed = await this.consumer.committed(tps);
            return new Map(
              tps.map((tp) => [partitionKey(tp), committed.get(tpKey(tp.topic, tp.partition)) ?? -1]),
            );
          },
          topology,
          realTopic: (t) => this.realTopic(t),
          previousTasks: () => ({ active: this.assignedActive, standby: this.assignedStandby }),
          taskOffsetSums: () => {
            // The checkpoints' sums, and the live sums of the standbys (in-memory ones have no checkpoint).
            const sums = taskOffsetSums(join(config.stateDir, config.applicationId));
            for (const [id, sum] of this.hooks.standbys?.offsetSums() ?? [])
              sums.set(id, Math.max(sum, sums.get(id) ?? -1));
            return sums;
          },
          errorCode: () => this.assignmentErrorCode,
          onRebalanceStart: () => {
            this.rebalanceInProgress = true;
          },
          onAssignment: (info, _partitions, generationId) => {
            this.rebalanceInProgress = false;
            if (info.errCode === SHUTDOWN_REQUESTED) {
              this.hooks.onShutdownRequested?.(this);
              return;
            }
            // Under the cooperative protocol the listener hears only of added partitions, maybe none: the
            // thread is RUNNING again once the poll that completed this generation returns.
            this.assignmentReceived = true;
            this.probeAtMs =
              info.nextRebalanceMs !== undefined && info.nextRebalanceMs > 0 ? info.nextRebalanceMs : null;
            this.assignedActive = info.activeTasks;
            this.assignedStandby = info.standbyTasks;
            // Before onPartitionsAssigned, which releases the standbys of tasks that became active here.
            this.hooks.standbys?.setFor(this.name, info.standbyTasks, info.activeTasks);
            this.hooks.onAssignmentInfo?.(this, info, generationId);
          },
          log: (m) => this.hooks.log(`${this.name}: ${m}`),
        }),
      ],
    });
    this.transactionalId = this.eos ? `${config.applicationId}-${processId}-${index}` : null;
    this.producer = this.createProducer();
    this.producerReady = !this.eos;
  }

  private createProducer(): Producer {
    return new Producer({
      // Kafka Streams' producer defaults under the properties' producer keys (client-configs.ts), then what
      // Streams sets itself.
      ...this.config.clients.producer,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.name}-producer`,
      ...(this.hooks.clientLogger === undefined ? {} : { logger: this.hooks.clientLogger }),
      ...(this.transactionalId !== null ? { transactionalId: this.transactionalId } : {}),
    });
  }

  /**
   * Asks every instance of the application to shut down (KIP-671): the next subscription carries
   * SHUTDOWN_REQUESTED, and a rebalance is asked for so the leader sees it at once.
   */
  sendShutdownRequest(): void {
    this.assignmentErrorCode = SHUTDOWN_REQUESTED;
    if (this.state !== 'CREATED') this.consumer.enforceRebalance();
  }

  private setState(state: ThreadState): void {
    this.state = state;
    this.hooks.onStateChange(this, state);
  }

  private realTopic = (topic: string): string =>
    this.topology.internalTopics.has(topic) ? repartitionTopicName(this.config.applicationId, topic) : topic;

  private logicalTopic(real: string): string {
    const prefix = `${this.config.applicationId}-`;
    if (real.startsWith(prefix) && this.topology.internalTopics.has(real.slice(prefix.length)))
      return real.slice(prefix.length);
    return real;
  }

  private taskDir(taskId: string): string {
    return join(this.config.stateDir, this.config.applicationId, taskId);
  }

  start(): void {
    assert.equal(this.state, 'CREATED');
    this.running = true;
    this.setState('STARTING');
    this.subscribe();
    this.loop = this.run().catch((e: unknown) => {
      this.running = false;
      this.hooks.onError(this, e instanceof Error ? e : new Error(String(e)));
    });
  }

  private subscribe(): void {
    this.consumer.subscribe(this.topology.sourceTopics().map(this.realTopic), {
      onPartitionsRevoked: (tps) => this.onRevoked(tps),
      onPartitionsAssigned: (tps) => this.onAssigned(tps),
      onPartitionsLost: (tps) => this.onLost(tps),
    });
  }

  /** Kafka's StreamThread.runLoop: a task migration drops the tasks and the thread goes on; other errors end it. */
  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.runOnce();
      } catch (e) {
        const why = this.migrationOf(e);
        if (why === null) throw e;
        await this.onTaskMigrated(why, e as Error);
      }
    }
  }

  private async runOnce(): Promise<void> {
    if (this.rejoinPending) {
      // As Kafka's handleTaskMigrated: the positions of the partitions still held are past what was committed,
      // and their tasks are gone; leaving and joining again drops both, and every partition this member gets
      // back starts over from its committed offset with a new task.
      this.rejoinPending = false;
      await this.consumer.unsubscribe();
      this.subscribe();
    }
    const records = await this.consumer.poll(POLL_TIMEOUT_MS);
    if (!this.running) return;
    if (this.assignmentReceived) {
      this.assignmentReceived = false;
      if (this.state !== 'RUNNING') this.setState('RUNNING');
    }
    for (const r of records) this.enqueue(r);
    const now = Date.now();
    if (this.probeAtMs !== null && now >= this.probeAtMs) {
      // A probing rebalance: the leader reads the warm-ups' lags again and moves the tasks they caught up on.
      this.probeAtMs = null;
      this.hooks.log(`${this.name}: probing rebalance`);
      this.consumer.enforceRebalance();
    }
    // Under EOS nothing is processed (nor punctuated, nor committed) before the producer can open transactions.
    if (!this.producerCanTransact()) return;
    this.processQueued(now);
    for (const task of this.tasks.values()) this.asTask(task, () => task.punctuate('WALL_CLOCK_TIME', now));
    if (this.sendError !== null) throw this.sendError;
    if (this.sendsInFlight > SENDS_IN_FLIGHT_MAX) await this.flushSends();
    if (
      (this.commitRequested || now - this.lastCommitMs >= this.config.commitIntervalMs) &&
      !this.rebalanceInProgress
    ) {
      try {
        await this.commit();
        this.purger.maybePurge(this.purgeableOffsets(), Date.now());
      } catch (e) {
        if (!this.eos && e instanceof KafkaProtocolError && e.code === ErrorCode.REBALANCE_IN_PROGRESS) {
          // at_least_once: the group is completing a rebalance; the offsets stay and the next commit, after
          // it, sends them (Kafka Streams retries such a commit the same way).
          this.hooks.log(`${this.name}: commit deferred, the group is rebalancing`);
          this.lastCommitMs = Date.now();
          return;
        }
        throw e;
      }
    }
  }

  /**
   * Why an error is a task migration (Kafka's TaskMigratedException), or null when it is not: the group refused a
   * commit because it moved on without this member, or, under EOS, the producer was fenced. Under
   * at_least_once REBALANCE_IN_PROGRESS defers the commit instead (runOnce).
   */
  private migrationOf(e: unknown): 'group' | 'producer' | null {
    const code = errorCodeOf(e);
    if (code === undefined) return null;
    if (GROUP_MOVED_CODES.has(code)) return 'group';
    if (this.eos && PRODUCER_FENCED_CODES.has(code)) return 'producer';
    return null;
  }

  /**
   * Under EOS: whether the current producer has completed initTransactions(); starts it when it has not and none
   * is under way. A call that fails without being fatal (its max.block.ms passed while the earlier transaction
   * of the transactional.id was still being aborted) is made again at the next loop.
   */
  private producerCanTransact(): boolean {
    if (this.producerReady) return true;
    if (this.producerInitError !== null) throw this.producerInitError;
    if (this.producerInitializing) return false;
    this.producerInitializing = true;
    const producer = this.producer;
    const started = Date.now();
    producer.initTransactions().then(
      () => {
        if (producer !== this.producer) return;
        this.producerInitializing = false;
        this.producerReady = true;
        const tookMs = Date.now() - started;
        if (tookMs >= 1000) this.hooks.log(`${this.name}: the producer's initTransactions took ${tookMs} ms`);
      },
      (e: Error) => {
        if (producer !== this.producer) return;
        this.producerInitializing = false;
        if (isFatalTransactionError(e) || !(e instanceof KafkaClientError) || !e.retriable) {
          this.producerInitError = e;
        } else {
          this.hooks.log(`${this.name}: initTransactions did not complete, trying again: ${e.message}`);
        }
      },
    );
    return false;
  }

  /** Queues a polled record in its task's partition group; a partition whose queue is full is paused. */
  private enqueue(r: ConsumerRecord): void {
    const key = partitionKey(r);
    const task = this.taskOfPartition.get(key);
    const group = task === undefined ? undefined : this.queued.get(task);
    if (group === undefined) {
      this.hooks.log(`${this.name}: no task for ${key}`);
      return; // revoked meanwhile
    }
    group.add(r);
    if (
      group.buffered(r.topic, r.partition) >= this.config.bufferedRecordsPerPartition &&
      !this.pausedPartitions.has(key)
    ) {
      this.pausedPartitions.add(key);
      this.consumer.pause([{ topic: r.topic, partition: r.partition }]);
    }
  }

  /** Processes each task's queued records while it is ready (Kafka's PartitionGroup rules, partition-group.ts). */
  private processQueued(nowMs: number): void {
    const lagOf = (topic: string, partition: number) => this.consumer.currentLag({ topic, partition });
    for (const group of this.queued.values()) {
      while (group.readyToProcess(nowMs, lagOf)) {
        const r = group.next()!;
        this.processOne(r);
        const key = partitionKey(r);
        if (
          this.pausedPartitions.has(key) &&
          group.buffered(r.topic, r.partition) < this.config.bufferedRecordsPerPartition
        ) {
          this.pausedPartitions.delete(key);
          this.consumer.resume([{ topic: r.topic, partition: r.partition }]);
        }
      }
    }
  }

  private processOne(r: ConsumerRecord): void {
    const key = partitionKey(r);
    const task = this.taskOfPartition.get(key);
    if (task === undefined) {
      this.hooks.log(`${this.name}: no task for ${key}`);
      return; // revoked meanwhile
    }
    this.asTask(task, () =>
      task.process({
        topic: this.logicalTopic(r.topic),
        partition: r.partition,
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key,
        value: r.value,
        headers: r.headers as Header[],
      }),
    );
    this.consumed.set(key, r.offset + 1);
    this.processed++;
  }

  /**
   * Runs a task's work; an error comes out with the task's id (Kafka's TaskExecutor.processTask and punctuate,
   * TaskManager.maybeWrapTaskException), except a task migration, which the thread handles as it is.
   */
  private asTask<T>(task: Task, work: () => T): T {
    try {
      return work();
    } catch (e) {
      throw this.migrationOf(e) === null ? taskError(e, task.id) : e;
    }
  }

  private readonly collector: RecordCollector = {
    send: (topic, key, value, timestamp, headers, partition, context) =>
      this.send(topic, key, value, timestamp, headers, partition, context),
  };

  private send(
    topic: string,
    key: Buffer | null,
    value: Buffer | null,
    timestamp: number,
    headers: readonly Header[],
    partition: number | undefined,
    context: ProductionErrorHandlerContext,
  ): void {
    if (this.eos) this.beginTransaction();
    this.sendsInFlight++;
    // The outcomes of a producer replaced since (fenced) are no longer this thread's concern.
    const producer = this.producer;
    producer.send({ topic, key, value, timestamp, headers: headers.map((h) => ({ ...h })), partition }).then(
      (m) => {
        if (producer !== this.producer) return;
        this.sendsInFlight--;
        const tp = partitionKey(m);
        if ((this.changelogOffsets.get(tp) ?? -1) < m.offset && topic.endsWith('-changelog'))
          this.changelogOffsets.set(tp, m.offset);
      },
      (e: Error) => {
        if (producer !== this.producer) return;
        this.sendsInFlight--;
        // Once an error is pending the thread stops at the next check: later failures add nothing (Kafka's
        // callback skips them as well).
        if (this.sendError !== null) return;
        const record = { topic, partition: partition ?? null, timestamp, key, value, headers };
        this.sendFailed(record, context, e);
      },
    );
  }

  /**
   * Kafka's RecordCollectorImpl.recordSendError: a fatal error, a fenced producer (a task migration under EOS, see
   * migrationOf) or a retriable one stop the thread without asking anyone; any other error (MESSAGE_TOO_LARGE, ...)
   * goes to the production exception handler, whose CONTINUE skips the record (counted as dropped) and whose FAIL
   * stops the thread at its next check (runOnce, a commit's flush).
   */
  private sendFailed(
    record: ProducedRecord<Buffer | null, Buffer | null>,
    context: ProductionErrorHandlerContext,
    e: Error,
  ): void {
    this.sendErrorTaskId = context.taskId;
    const message = `Error encountered sending record to topic ${record.topic} for task ${context.taskId} due to:\n${e.message}`;
    const kind = sendErrorKind(e);
    if (kind !== 'handled') {
      const why = {
        fatal:
          'Written offsets would not be recorded and no more records would be sent since this is a fatal error.',
        fenced:
          'Written offsets would not be recorded and no more records would be sent since the producer is fenced, indicating the task may be migrated out',
        // Kafka marks the task corrupted and revives it; Brook's thread stops, as it did for every send error.
        retriable:
          'The broker is either slow or in bad state (like not having enough replicas) in responding the request, or the connection to broker was interrupted sending the request or receiving the response.',
      }[kind];
      this.hooks.log(`${this.name}: ${message}\n${why}`);
      this.sendError = new StreamsError(`${message}\n${why}`, { cause: e });
      return;
    }
    let response: unknown;
    try {
      response = this.config.productionExceptionHandler.handle(context, record, e);
    } catch (thrown) {
      response = thrown;
    }
    if (response === 'CONTINUE') {
      this.hooks.log(
        `${this.name}: ${message}\nException handler choose to CONTINUE processing in spite of this error but written offsets would not be recorded.`,
      );
      this.droppedRecords++;
    } else if (response === 'FAIL') {
      const failed = `${message}\nException handler choose to FAIL the processing, no more records would be sent.`;
      this.hooks.log(`${this.name}: ${failed}`);
      this.sendError = new StreamsError(failed, { cause: e });
    } else {
      this.hooks.log(
        `${this.name}: Production error callback failed after production error for record of ${record.topic}: ${e.message}`,
      );
      const fatal =
        response instanceof Error ? response : new Error('Invalid ProductionExceptionHandler response.');
      this.sendError = new FailedProcessingError('Fatal user code error in production error callback', fatal);
    }
  }

  /** Under EOS, opens the thread's transaction if none is open (Kafka's StreamsProducer.maybeBeginTransaction). */
  private beginTransaction(): void {
    if (this.inTransaction) return;
    this.producer.beginTransaction();
    this.inTransaction = true;
  }

  /** Waits until every record handed to the collector so far is acknowledged. */
  private async flushSends(): Promise<void> {
    await this.producer.flush();
    if (this.sendError !== null) throw this.sendError;
  }

  /**
   * A commit's sends flushed while tasks are revoked or closed: a failed send comes out with the id of the task
   * that sent the record, as Kafka's per-task RecordCollector throws it from that task's prepareCommit.
   */
  private async flushSendsOfTasks(): Promise<void> {
    try {
      await this.flushSends();
    } catch (e) {
      const taskId = this.sendErrorTaskId;
      throw e !== this.sendError || taskId === null || this.migrationOf(e) !== null
        ? e
        : taskError(e, taskId);
    }
  }

  /**
   * Commits everything processed so far. at_least_once: records acknowledged, stores flushed, offsets committed,
   * checkpoints written. exactly_once_v2: records acknowledged, stores flushed, the offsets sent into the
   * transaction, which then commits; no checkpoint (see the header).
   */
  async commit(closing: ReadonlySet<Task> | null = null): Promise<void> {
    this.commitRequested = false;
    // Revoked or closed tasks first, as Kafka's handleRevocation prepares them before the others it commits along.
    const tasks =
      closing === null
        ? [...this.tasks.values()]
        : [...this.tasks.values()].sort((a, b) => Number(closing.has(b)) - Number(closing.has(a)));
    // Kafka names the task of an error only when tasks are revoked or closed (TaskManager.handleRevocation and
    // tryCloseCleanActiveTasks); its periodic commit lets a task's error go up as it is.
    const ofTask = <T>(task: Task, work: () => T): T => (closing === null ? work() : this.asTask(task, work));
    for (const task of tasks) ofTask(task, () => task.flushCaches());
    await (closing === null ? this.flushSends() : this.flushSendsOfTasks());
    for (const task of tasks) ofTask(task, () => task.flush());
    const offsets: (TopicPartition & { offset: number })[] = [];
    for (const [tp, offset] of this.consumed) offsets.push({ ...topicPartitionOfKey(tp), offset });
    if (this.eos) {
      if (offsets.length > 0) {
        this.beginTransaction();
        await this.producer.sendOffsetsToTransaction(offsets, this.consumer.groupMetadata());
      }
      if (this.inTransaction) {
        await this.producer.commitTransaction();
        this.inTransaction = false;
      }
    } else if (offsets.length > 0) {
      await this.consumer.commit(offsets);
    }
    for (const o of offsets)
      if (this.topology.internalTopics.has(this.logicalTopic(o.topic)))
        this.committedRepartition.set(partitionKey(o), o.offset);
    // A store restored from its source topic holds that topic up to the record before the committed offset
    // (Kafka's StreamTask.checkpointableOffsets: the consumed offsets of source changelogs).
    for (const o of offsets)
      if (this.sourceChangelogTopics.has(o.topic)) this.changelogOffsets.set(partitionKey(o), o.offset - 1);
    this.consumed.clear();
    if (!this.eos) for (const task of tasks) ofTask(task, () => this.checkpoint(task));
    this.lastCommitMs = Date.now();
  }

  /**
   * The committed offsets of the repartition partitions this thread's active tasks read now (Kafka's
   * StreamTask.purgeableOffsets): the records before them are consumed for good. A partition whose task moved
   * away is left to its new owner.
   */
  private purgeableOffsets(): Map<string, number> {
    for (const tp of this.committedRepartition.keys())
      if (!this.taskOfPartition.has(tp)) this.committedRepartition.delete(tp);
    return this.committedRepartition;
  }

  /**
   * A task migration (Kafka's TaskMigratedException and StreamThread.handleTaskMigrated): the group moved on
   * without this member, or under EOS its producer was fenced. Whatever was processed since the last commit is
   * dropped: the open transaction is aborted (a fenced producer cannot abort; its coordinator already did, and
   * the producer is replaced by a new one of the same transactional.id), the tasks are closed without a
   * checkpoint (under EOS their stores are rebuilt from the changelogs), and the consumer leaves the group and
   * joins again at the next loop. Records polled meanwhile for a dropped task are skipped and never committed.
   */
  private async onTaskMigrated(why: 'group' | 'producer', e: Error): Promise<void> {
    this.hooks.log(
      `${this.name}: ${why === 'group' ? 'the group moved on without this member' : 'the producer was fenced'} ` +
        `(${e.message}); tasks dropped, joining the group again`,
    );
    this.consumed.clear();
    if (why === 'producer') this.replaceProducer();
    else await this.abortTransaction();
    for (const [id, task] of this.tasks) this.closeTask(id, task);
    this.lastCommitMs = Date.now();
    this.rejoinPending = true;
  }

  /** After the producer was fenced: a new one of the same transactional.id, initialized before the next work. */
  private replaceProducer(): void {
    const fenced = this.producer;
    this.producer = this.createProducer();
    this.producerReady = !this.eos;
    this.producerInitializing = false;
    this.inTransaction = false;
    this.sendsInFlight = 0;
    this.sendError = null;
    this.sendErrorTaskId = null;
    // Its records not sent yet are failed at once (their outcomes are ignored: send()).
    fenced.close(0).catch((err: unknown) => {
      this.hooks.log(`${this.name}: closing the fenced producer: ${(err as Error).message}`);
    });
  }

  /**
   * Under EOS, after a failure: aborts the open transaction, so that none of what was processed since the last
   * commit becomes visible (its input is read again by whoever owns the partitions next). Errors are logged: a
   * producer that cannot abort (fenced) leaves the transaction to the coordinator's timeout.
   */
  private async abortTransaction(): Promise<void> {
    if (!this.eos || !this.inTransaction) return;
    this.inTransaction = false;
    try {
      await this.producer.abortTransaction();
    } catch (e) {
      this.hooks.log(`${this.name}: could not abort the transaction: ${(e as Error).message}`);
    }
  }

  /** Writes a task's checkpoint: the changelog offsets its persistent stores hold. */
  private checkpoint(task: Task): void {
    const offsets = new Map<string, number>();
    for (const [, e] of task.engines) {
      if (!e.engine.persistent || e.changelog === null) continue;
      const tp = partitionKey({ topic: e.changelog, partition: task.partition });
      const offset = this.changelogOffsets.get(tp);
      if (offset !== undefined) offsets.set(tp, offset);
      else {
        const previous = readCheckpoint(this.taskDir(task.id)).get(tp);
        if (previous !== undefined) offsets.set(tp, previous);
      }
    }
    if (offsets.size > 0) writeCheckpoint(this.taskDir(task.id), offsets);
  }

  private async onRevoked(tps: TopicPartition[]): Promise<void> {
    this.hooks.log(`${this.name}: revoked ${tps.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`);
    this.setState('PARTITIONS_REVOKED');
    if (this.tasks.size === 0) return;
    const revoked = new Set(tps.map((tp) => partitionKey(tp)));
    const revokedTasks = new Set<Task>();
    for (const [k, task] of this.taskOfPartition) if (revoked.has(k)) revokedTasks.add(task);
    try {
      await this.commit(revokedTasks);
    } catch (e) {
      // Every task is dropped (the revoked ones included: their new owner starts from the last commit).
      const why = this.migrationOf(e);
      if (why === null) throw e;
      await this.onTaskMigrated(why, e as Error);
      return;
    }
    for (const [id, task] of this.tasks) {
      if (!revokedTasks.has(task)) continue;
      // Closed cleanly after a commit: under EOS too, its stores match its changelogs now.
      if (this.eos) this.checkpoint(task);
      this.closeTask(id, task);
    }
  }

  private async onLost(tps: TopicPartition[]): Promise<void> {
    // Fenced: what was processed since the last commit belongs to another member now; drop without committing
    // (under EOS, the transaction is aborted; the tasks' checkpoints stay absent, so their stores are rebuilt).
    this.hooks.log(`${this.name}: lost ${tps.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`);
    this.consumed.clear();
    await this.abortTransaction();
    const lost = new Set(tps.map((tp) => partitionKey(tp)));
    for (const [id, task] of this.tasks) {
      const owned = [...this.taskOfPartition].filter(([, t]) => t === task).map(([k]) => k);
      if (owned.some((k) => lost.has(k))) this.closeTask(id, task);
    }
  }

  private closeTask(id: string, task: Task): void {
    // Its queued records are dropped: whoever runs the task next starts from the committed offsets.
    const group = this.queued.get(task);
    this.queued.delete(task);
    if (group !== undefined) {
      const assigned = new Set(this.consumer.assignment().map((tp) => partitionKey(tp)));
      for (const tp of group.partitions()) {
        const key = partitionKey(tp);
        if (!this.pausedPartitions.delete(key)) continue;
        if (assigned.has(key)) this.consumer.resume([tp]);
      }
    }
    task.close();
    this.tasks.delete(id);
    for (const [k, t] of this.taskOfPartition) if (t === task) this.taskOfPartition.delete(k);
    for (const [, e] of task.engines)
      if (e.changelog !== null)
        this.changelogOffsets.delete(partitionKey({ topic: e.changelog, partition: task.partition }));
  }

  private async onAssigned(tps: TopicPartition[]): Promise<void> {
    this.hooks.log(`${this.name}: assigned ${tps.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`);
    this.setState('PARTITIONS_ASSIGNED');
    const created: Task[] = [];
    if (this.hooks.releaseStandbysElsewhere !== undefined) {
      // A standby of a new task may be open in another worker of this instance: its state directory must be
      // closed (and checkpointed) there before this thread opens it.
      const incoming = new Set<string>();
      for (const tp of tps) {
        const st = this.topology.subtopologyOfTopic(this.logicalTopic(tp.topic));
        const id = st === undefined ? undefined : `${st.id}_${tp.partition}`;
        if (id !== undefined && !this.tasks.has(id)) incoming.add(id);
      }
      if (incoming.size > 0) await this.hooks.releaseStandbysElsewhere([...incoming].sort());
    }
    // The new tasks' standbys here are released first (their stores closed, or handed over in memory).
    const fresh = new Map<string, Map<string, HandedStore>>();
    for (const tp of tps) {
      const st = this.topology.subtopologyOfTopic(this.logicalTopic(tp.topic));
      const id = st === undefined ? undefined : `${st.id}_${tp.partition}`;
      if (id !== undefined && !this.tasks.has(id) && !fresh.has(id))
        fresh.set(id, this.hooks.standbys?.release(id) ?? new Map<string, HandedStore>());
    }
    await this.dropStateBeforeChangelogStart([...fresh].filter(([, h]) => h.size === 0).map(([id]) => id));
    for (const tp of tps) {
      const st = this.topology.subtopologyOfTopic(this.logicalTopic(tp.topic));
      if (st === undefined) continue;
      const id = `${st.id}_${tp.partition}`;
      let task = this.tasks.get(id);
      if (task === undefined) {
        const handed = fresh.get(id) ?? new Map<string, HandedStore>();
        task = this.createTask(st.id, tp.partition, handed);
        for (const h of handed.values()) h.engine.close();
        this.tasks.set(id, task);
        created.push(task);
      }
      this.taskOfPartition.set(partitionKey(tp), task);
      let group = this.queued.get(task);
      if (group === undefined) this.queued.set(task, (group = new PartitionGroup(this.config.maxTaskIdleMs)));
      group.addPartition(tp.topic, tp.partition);
    }
    await this.restore(created);
    for (const task of created) task.init();
    this.setState('RUNNING');
  }

  /**
   * A task whose checkpoint lies before its changelog's first offset (records after it were deleted) cannot resume
   * from it. Kafka's restore consumer has auto.offset.reset "none": the out-of-range offset marks the task
   * corrupted, the offsets of all its changelogs (not only the truncated one's: TaskManager.closeDirtyAndRevive
   * marks the task's changelogPartitions()) are dropped and it is closed dirty, which removes its state directory
   * only under exactly-once (StateManagerUtil.closeStateManager). Brook checks before the tasks are opened: under
   * EOS it removes their directories; under at_least_once it removes their checkpoints, so that the stores keep
   * their contents and every changelog of the task is replayed from its first offset over them.
   */
  private async dropStateBeforeChangelogStart(taskIds: string[]): Promise<void> {
    const saved: { taskId: string; key: string; tp: TopicPartition; offset: number }[] = [];
    for (const taskId of taskIds)
      for (const [key, offset] of readCheckpoint(this.taskDir(taskId)))
        saved.push({ taskId, key, tp: topicPartitionOfKey(key), offset });
    if (saved.length === 0) return;
    const starts = await this.listChangelogOffsets(
      saved.map((s) => s.tp),
      'beginning',
      'restore',
    );
    const corrupted = new Set<string>();
    for (const s of saved) {
      const start = starts.get(partitionKey(s.tp));
      if (start !== undefined && s.offset + 1 < start) {
        this.hooks.log(
          `${this.name}: task ${s.taskId}: checkpointed offset ${s.offset} of ${s.tp.topic}-${s.tp.partition} is ` +
            `before its first offset ${start}: the task is corrupted, ` +
            (this.eos ? 'wiping its state to restore it' : 'restoring its stores from their first offsets'),
        );
        corrupted.add(s.taskId);
      }
    }
    for (const taskId of corrupted) {
      const dir = this.taskDir(taskId);
      if (this.eos) rmSync(dir, { recursive: true, force: true });
      else deleteCheckpoint(dir);
    }
  }

  /** `handed`: in-memory stores of this task's released standby; the task takes them over (removed from the map). */
  private createTask(subtopologyId: number, partition: number, handed: Map<string, HandedStore>): Task {
    const st = this.topology.subtopologies()[subtopologyId]!;
    const applicationId = this.config.applicationId;
    const dir = this.taskDir(`${subtopologyId}_${partition}`);
    if (this.eos && existsSync(dir) && !existsSync(checkpointPath(dir))) {
      // Kafka's rule under EOS: state without a checkpoint may hold writes of a transaction that never
      // committed (the task's last run did not close cleanly). Wiped, it is restored from the changelog.
      this.hooks.log(
        `${this.name}: no checkpoint for task ${subtopologyId}_${partition} under EOS: wiping its state`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
    return new Task(st, partition, {
      applicationId,
      threadName: this.name,
      topology: this.topology,
      collector: this.collector,
      realTopic: this.realTopic,
      changelogTopic: (store) => changelogTopicName(applicationId, store),
      partitionsOf: (topic) => this.layout.partitions.get(topic),
      openEngine: (builder, taskId) => {
        const fromStandby = handed.get(builder.name);
        if (fromStandby !== undefined) {
          handed.delete(builder.name);
          if (fromStandby.offset !== undefined)
            this.handedOffsets.set(fromStandby.changelogPartition, fromStandby.offset);
          return fromStandby.engine;
        }
        const dir = this.taskDir(taskId);
        mkdirSync(dir, { recursive: true });
        return openEngine(builder, dir);
      },
      defaultKeySerde: this.config.defaultKeySerde,
      defaultValueSerde: this.config.defaultValueSerde,
      deserializationExceptionHandler: this.config.deserializationExceptionHandler,
      processingExceptionHandler: this.config.processingExceptionHandler,
      productionExceptionHandler: this.config.productionExceptionHandler,
      onDroppedRecord: () => {
        this.droppedRecords++;
      },
      defaultTimestampExtractor: this.config.defaultTimestampExtractor,
      appConfigs: this.config.appConfigs,
      wallClockMs: () => Date.now(),
      log: (m) => this.hooks.log(m),
      isTaskMigration: (e) => this.migrationOf(e) !== null,
      requestCommit: () => {
        this.commitRequested = true;
      },
      globalStore: (name) => this.hooks.globalStore?.(name),
      cacheBudget: this.cacheBudget,
    });
  }

  /**
   * Brings the stores of new tasks up to their changelogs' ends: from the offset after the checkpoint for a
   * persistent store that has one, else from the beginning (an in-memory store, or no checkpoint).
   */
  private async restore(tasks: Task[]): Promise<void> {
    try {
      await this.restoreStores(tasks);
    } finally {
      // Under EOS the stores move ahead of the last commit from now on: no checkpoint may speak for them.
      if (this.eos) for (const task of tasks) rmSync(checkpointPath(this.taskDir(task.id)), { force: true });
    }
  }

  private async restoreStores(tasks: Task[]): Promise<void> {
    const targets: RestoreTarget[] = [];
    for (const task of tasks) {
      const checkpoint = readCheckpoint(this.taskDir(task.id));
      for (const [store, e] of task.engines) {
        if (e.changelog === null) continue;
        const tp = { topic: e.changelog, partition: task.partition };
        // A checkpoint speaks for the store's files only if they survived; a store created afresh is rebuilt,
        // unless it is a standby's in-memory store handed over, which holds the changelog up to its offset.
        const key = partitionKey({ topic: e.changelog, partition: task.partition });
        const saved = e.engine.reopened ? checkpoint.get(key) : this.handedOffsets.get(key);
        this.handedOffsets.delete(key);
        if (saved !== undefined) this.changelogOffsets.set(key, saved);
        targets.push({
          taskId: task.id,
          tp,
          store,
          engine: e.engine,
          from: saved === undefined ? null : saved + 1,
          apply:
            e.restoreRecord ?? ((r) => restoreInto(e.engine, e.timestamped, r.key!, r.value, r.timestamp)),
        });
      }
    }
    if (targets.length === 0) return;
    const restorer = new Consumer({
      ...this.config.clients.restoreConsumer,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.name}-restore-consumer`,
      ...(this.hooks.clientLogger === undefined ? {} : { logger: this.hooks.clientLogger }),
      // Kafka's getRestoreConsumerConfigs: a position out of range is the thread's to handle (below), never a
      // silent jump to the first offset over the store's older contents.
      autoOffsetReset: 'none',
    });
    const listener = this.hooks.restoreListener;
    try {
      const ends = await restorer.endOffsets(targets.map((t) => t.tp));
      const endOf = new Map(ends.map((e) => [partitionKey(e), e.offset]));
      // A store restored from its source topic stops at the group's committed offset (none: 0), where its task
      // goes on processing: Kafka's StoreChangelogReader restores a source changelog up to
      // min(end offset, committed offset).
      const fromSources = targets.filter((t) => this.sourceChangelogTopics.has(t.tp.topic)).map((t) => t.tp);
      const committed = fromSources.length === 0 ? new Map() : await this.consumer.committed(fromSources);
      const pending = new Map<string, PendingRestore>();
      for (const t of targets) {
        const key = partitionKey(t.tp);
        let end = endOf.get(key) ?? 0;
        if (this.sourceChangelogTopics.has(t.tp.topic))
          end = Math.min(end, Math.max(0, committed.get(tpKey(t.tp.topic, t.tp.partition)) ?? 0));
        endOf.set(key, end);
        if (end <= (t.from ?? 0)) continue;
        pending.set(key, { target: t, end, restored: 0 });
      }
      if (pending.size === 0) return;
      restorer.assign([...pending.values()].map((p) => p.target.tp));
      // Every partition is placed before any position is asked: position() resolves every assigned partition
      // without one, as Kafka's, and the restorer's auto.offset.reset is none, so one not placed yet would fail it.
      for (const p of pending.values()) {
        if (p.target.from === null) await restorer.seekToBeginning([p.target.tp]);
        else restorer.seek(p.target.tp, p.target.from);
      }
      for (const p of pending.values()) {
        const start = listener === undefined ? 0 : await restorer.position(p.target.tp);
        listener?.onRestoreStart(p.target.tp, p.target.store, start, p.end);
      }
      let restored = 0;
      const started = Date.now();
      while (pending.size > 0 && this.running) {
        // A poll's records come in runs of one partition: its entry is looked up once per run, and the last
        // offset applied is noted once per run (the per-record string keys cost more than the store's put).
        let run: {
          key: string;
          topic: string;
          partition: number;
          p: PendingRestore | undefined;
        } | null = null;
        let lastApplied = -1;
        let applied = 0;
        const endRun = () => {
          if (run === null || lastApplied < 0) return;
          this.changelogOffsets.set(run.key, lastApplied);
          run.p!.restored += applied;
          listener?.onBatchRestored(run.p!.target.tp, run.p!.target.store, lastApplied, applied);
        };
        let records: ConsumerRecord[];
        try {
          records = await restorer.poll(POLL_TIMEOUT_MS);
        } catch (err) {
          if (!(err instanceof KafkaProtocolError) || err.code !== ErrorCode.OFFSET_OUT_OF_RANGE) throw err;
          await this.restartTruncatedRestoration(restorer, targets, endOf, pending, err);
          continue;
        }
        for (const r of records) {
          if (run === null || run.partition !== r.partition || run.topic !== r.topic) {
            endRun();
            const key = partitionKey(r);
            run = { key, topic: r.topic, partition: r.partition, p: pending.get(key) };
            lastApplied = -1;
            applied = 0;
          }
          const p = run.p;
          if (p === undefined || r.offset >= p.end || r.key === null) continue;
          p.target.apply(r);
          lastApplied = r.offset;
          applied++;
          restored++;
        }
        endRun();
        for (const [key, p] of pending)
          if ((await restorer.position(p.target.tp)) >= p.end) {
            pending.delete(key);
            listener?.onRestoreEnd(p.target.tp, p.target.store, p.restored);
          }
      }
      for (const task of tasks) task.flush();
      this.hooks.log(`${this.name}: restored ${restored} records in ${Date.now() - started} ms`);
      this.restoredRecords += restored;
    } finally {
      await restorer.close();
    }
  }

  /**
   * The restore consumer's position in some changelog partitions fell before their first offset while restoring
   * (records deleted by DeleteRecords or retention since the check at assignment). Kafka's StoreChangelogReader
   * marks their tasks corrupted, and the task manager (or state updater) marks all the changelogs of such a task
   * corrupted, not only the truncated one: their offsets are dropped and the task is closed dirty and revived,
   * its state wiped only under exactly-once. Here every store of such a task restores again from its changelog's
   * first offset (`ends`: where each restoration stops), over its contents under at_least_once, emptied first
   * under EOS; an in-memory store is emptied either way (Kafka's dirty close loses it). A store of the task that
   * had nothing left to restore, or was done, starts again too (the restore listener hears its start).
   */
  private async restartTruncatedRestoration(
    restorer: Consumer,
    targets: RestoreTarget[],
    ends: Map<string, number>,
    pending: Map<string, PendingRestore>,
    error: KafkaProtocolError,
  ): Promise<void> {
    const entries = [...pending.entries()];
    const starts = await restorer.beginningOffsets(entries.map(([, p]) => p.target.tp));
    const startOf = new Map(starts.map((o) => [partitionKey(o), o.offset]));
    const corrupted = new Set<string>();
    for (const [key, p] of entries) {
      const start = startOf.get(key);
      const position = await restorer.position(p.target.tp);
      if (start === undefined || position >= start) continue;
      const { taskId, tp, store } = p.target;
      this.hooks.log(
        `${this.name}: restoring store ${store} from ${tp.topic}-${tp.partition}: offset ${position} is before ` +
          `its first offset ${start} (the changelog was truncated): task ${taskId} is corrupted, ` +
          (this.eos
            ? 'wiping its stores to restore them from their first offsets'
            : 'restoring its stores again from their first offsets'),
      );
      corrupted.add(taskId);
    }
    // No position lies before its partition's first offset: some other out-of-range answer, the thread fails.
    if (corrupted.size === 0) throw error;
    const added: RestoreTarget[] = [];
    for (const t of targets) {
      if (!corrupted.has(t.taskId)) continue;
      const key = partitionKey(t.tp);
      wipeCorruptedState(t.engine, this.eos);
      this.changelogOffsets.delete(key);
      const p = pending.get(key);
      // The restoration starts again: its total (onRestoreEnd) counts from here.
      if (p !== undefined) p.restored = 0;
      else {
        pending.set(key, { target: t, end: ends.get(key) ?? 0, restored: 0 });
        added.push(t);
      }
    }
    if (added.length > 0) restorer.assign([...pending.values()].map((p) => p.target.tp));
    for (const t of targets) if (corrupted.has(t.taskId)) await restorer.seekToBeginning([t.tp]);
    for (const t of added)
      this.hooks.restoreListener?.onRestoreStart(
        t.tp,
        t.store,
        await restorer.position(t.tp),
        ends.get(partitionKey(t.tp)) ?? 0,
      );
  }

  /**
   * The instances of a store in this thread's running tasks, with their partition (interactive queries); with
   * `includeRestoring` also those of tasks still restoring (stale queries, as Kafka's enableStaleStores).
   */
  storesNamed(name: string, includeRestoring = false): { partition: number; store: StateStore }[] {
    const out: { partition: number; store: StateStore }[] = [];
    for (const task of this.tasks.values()) {
      const store = task.stores.get(name);
      if (store !== undefined && (task.initialized || includeRestoring))
        out.push({ partition: task.partition, store });
    }
    return out;
  }

  /**
   * First or end offsets of changelog partitions ("topic:partition" -> offset), read by a short-lived consumer set
   * up as the restore one and named for its use (Kafka reads the leader's lag probe's end offsets with the thread's
   * admin client).
   */
  private async listChangelogOffsets(
    tps: TopicPartition[],
    which: 'beginning' | 'end',
    use: 'restore' | 'lag',
  ): Promise<Map<string, number>> {
    const reader = new Consumer({
      ...this.config.clients.restoreConsumer,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.name}-${use}-consumer`,
      ...(this.hooks.clientLogger === undefined ? {} : { logger: this.hooks.clientLogger }),
    });
    try {
      const offsets =
        which === 'beginning' ? await reader.beginningOffsets(tps) : await reader.endOffsets(tps);
      return new Map(offsets.map((o) => [partitionKey(o), o.offset]));
    } finally {
      await reader.close().catch(() => {});
    }
  }

  /** Ids of the standby tasks the thread's last assignment listed (kept by the instance's standby updater). */
  standbyTaskIds(): string[] {
    return [...this.assignedStandby].sort();
  }

  /** Ids of the tasks this thread runs now ("0_1", ...). */
  activeTaskIds(): string[] {
    return [...this.tasks.keys()].sort();
  }

  /** Changelog records applied by restoration since start (for tests). */
  restoredRecords = 0;

  /**
   * Commits, closes the tasks (writing their checkpoints) and, with `leaveGroup` (KafkaStreams' CloseOptions) or
   * consumer.internal.leave.group.on.close true, leaves the group; by Kafka Streams' default the member stays until
   * its session times out.
   */
  async close(leaveGroup = false): Promise<void> {
    if (this.state === 'DEAD') return;
    const wasRunning = this.running;
    this.running = false;
    this.setState('PENDING_SHUTDOWN');
    await this.loop;
    let clean = false;
    try {
      if (wasRunning && this.sendError === null) {
        await this.commit(new Set(this.tasks.values()));
        clean = true;
      }
    } catch (e) {
      // Kafka's StreamThread.completeShutdown logs what the task manager's shutdown threw and closes the rest.
      const task = e instanceof StreamsError && e.taskId !== null ? ` (task ${e.taskId})` : '';
      this.hooks.log(
        `${this.name}: Failed to close task manager due to the following error${task}: ${(e as Error).message}`,
      );
      throw e;
    } finally {
      if (!clean) await this.abortTransaction();
      for (const [id, task] of this.tasks) {
        // Under EOS a checkpoint is written only here, on a clean close (at_least_once wrote it at the commit).
        if (clean && this.eos) this.checkpoint(task);
        this.closeTask(id, task);
      }
      await this.consumer.close(leaveGroup ? { leaveGroup } : {}).catch(() => {});
      await this.producer.close().catch(() => {});
      await this.purger.close();
      this.hooks.standbys?.setFor(this.name, []);
      this.setState('DEAD');
    }
  }
}
