// The controller (Kafka's ZooKeeper-mode KafkaController): one broker of the cluster, elected through the
// ephemeral /controller node, decides partition leadership and tells brokers about it.
//
// Election: the broker that creates /controller, in one transaction with the increment of /controller_epoch,
// is the controller for that epoch. Every later write of the controller carries a check of /controller_epoch's
// data version, so a controller that was replaced (its session expired, another broker took over) cannot write
// anything: its first write fails and it resigns. When its session ends the controller resigns; the owner of
// the session opens a new one and calls restart().
//
// Watches: /controller (to run for election when it goes), /brokers/ids (brokers come and go; a broker's epoch
// is the czxid of its registration), /brokers/topics (new and deleted topics), each /brokers/topics/<t> (new
// partitions), /admin/delete_topics (deletion requests).
//
// State: a ControllerContext, rebuilt at every failover, changed only by events of one EventQueue. An event
// does its store I/O first and then applies the result in one synchronous step; sends to brokers are started
// after the state is consistent and never awaited by an event (see ChannelSender for their ordering).
//
// Lifecycle: new Controller(options).start() runs for election; beginShutdown() (the broker is stopping) ends
// running for election, while an active controller goes on serving until stop(); stop() resigns (deleting
// /controller if it holds it) and stops processing. sync() resolves when everything the controller knew to do has been done and
// answered by the brokers, which is what a single node awaits before answering CreateTopics.

import { type Clock, systemClock } from '../common/clock.js';
import type { BrokerId, PartitionId } from '../common/ids.js';
import { type Logger, silentLogger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { LeaderAndIsrResponse } from '../protocol/messages/04-leader-and-isr.js';
import type {
  ControlledShutdownRequest,
  ControlledShutdownResponse,
} from '../protocol/messages/07-controlled-shutdown.js';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../protocol/messages/43-elect-leaders.js';
import type {
  AlterPartitionReassignmentsRequest,
  AlterPartitionReassignmentsResponse,
} from '../protocol/messages/45-alter-partition-reassignments.js';
import type {
  ListPartitionReassignmentsRequest,
  ListPartitionReassignmentsResponse,
} from '../protocol/messages/46-list-partition-reassignments.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../protocol/messages/56-alter-partition.js';
import { AdminZnodes } from './admin-znodes.js';
import { type LiveBroker, readLiveBrokers } from './broker-registration.js';
import {
  onAlterPartition,
  onCheckLeaderBalance,
  onControlledShutdown,
  onElectLeaders,
} from './broker-requests.js';
import { type BrokerChannel, ChannelSender, defaultRetryPolicy, type RetryPolicy } from './channel.js';
import {
  ControllerContext,
  type PartitionEntry,
  replicasOf,
  type TopicEntry,
  type TopicPartition,
} from './context.js';
import {
  type ControllerCore,
  type Fenced,
  partitionKey,
  type StateWrite,
  sameList,
} from './controller-core.js';
import { type EventObserver, EventQueue } from './event-queue.js';
import { initialLeadership, type Leadership, NO_LEADER, reconcileLeadership } from './leader-election.js';
import { LivenessProber } from './liveness-probe.js';
import { takeLogDirEvents } from './log-dir-events.js';
import { newUuid, type Random, systemRandom } from './random.js';
import {
  finishSyncedReassignments,
  onAlterReassignments,
  onListReassignments,
} from './reassignment-requests.js';
import type { ApiError } from './replica-assignment.js';
import {
  buildLeaderAndIsr,
  buildStopReplica,
  buildUpdateMetadata,
  type RequestHeaderFields,
} from './requests.js';
import { SelfHealer, type SelfHealingOptions, type SelfHealingStatus } from './self-healing.js';
import type { CoordinationStore, MultiResult, Op } from './store/store.js';
import { queueDeletions, replicaDeletionBegun, TopicDeletionManager } from './topic-deletion.js';
import {
  brokerPath,
  CONTROLLER_EPOCH_PATH,
  CONTROLLER_PATH,
  DELETE_TOPICS_PATH,
  decodeController,
  decodeControllerEpoch,
  decodeEntityConfig,
  decodePartitionState,
  decodeTopicAssignment,
  encodeController,
  encodeControllerEpoch,
  encodePartitionState,
  encodeTopicAssignment,
  partitionPath,
  partitionStatePath,
  type ReplicaAssignment,
  TOPICS_PATH,
  topicConfigPath,
  topicPartitionsPath,
  topicPath,
} from './zk-layout/index.js';

export interface ControllerOptions {
  readonly brokerId: BrokerId;
  /** This broker's session; the broker registers itself on the same session. */
  readonly store: CoordinationStore;
  readonly channel: BrokerChannel;
  readonly logger?: Logger;
  readonly random?: Random;
  /** Wall clock for the /controller registration's timestamp. */
  readonly clock?: Clock;
  /**
   * The broker's unclean.leader.election.enable, for topics that do not set it. Default false. A function is read
   * at each election: the key is a dynamic cluster-wide broker config in Kafka.
   */
  readonly uncleanLeaderElectionEnable?: boolean | (() => boolean);
  /** delete.topic.enable. Default true. */
  readonly deleteTopicEnable?: boolean;
  /** auto.leader.rebalance.enable with its settings; absent or null: no automatic preferred elections. */
  readonly autoLeaderRebalance?: LeaderRebalanceOptions | null;
  /** How failed sends are retried; default: while the broker stays registered, up to about 45 s. */
  readonly retry?: RetryPolicy;
  /** Bound of the requests waiting for one broker (default QUEUED_REQUESTS_PER_BROKER_MAX). */
  readonly queuedRequestsPerBrokerMax?: number;
  /** inter.broker.listener.name; null (default) uses each broker's first endpoint. */
  readonly interBrokerListener?: string | null;
  /** brook.self.healing.*: replicas of a broker gone this long move to live brokers; absent or null: off. */
  readonly selfHealing?: SelfHealingOptions | null;
  /**
   * Fast failure detection (liveness-probe.ts): probe interval and refusals in a row before the controller fences
   * a broker; null or an interval <= 0: off (brokers die only when their sessions expire).
   */
  readonly liveness?: { readonly intervalMs: number; readonly refusalsToFence: number } | null;
}

export interface LeaderRebalanceOptions {
  /** leader.imbalance.per.broker.percentage: a broker leading fewer of its preferred partitions triggers. */
  readonly imbalancePerBrokerPercentage: number;
  /** leader.imbalance.check.interval.seconds, in milliseconds. */
  readonly checkIntervalMs: number;
  /** The timer; default setTimeout, not keeping the process alive. Answers a function that cancels. */
  readonly schedule?: (run: () => void, delayMs: number) => () => void;
}

function defaultSchedule(run: () => void, delayMs: number): () => void {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}

const UNCLEAN_KEY = 'unclean.leader.election.enable';
/**
 * Partition states written in one transaction. Each operation is about 150 bytes, so a batch stays far below
 * ZooKeeper's 1 MiB request limit (jute.maxbuffer).
 */
const STATE_WRITES_PER_TRANSACTION = 500;

type WriteOutcome =
  | { readonly ok: true; readonly version: number }
  | { readonly ok: false; readonly code: string };

/** How long sync() waits at most by default (Kafka's default request.timeout.ms for admin calls). */
const SYNC_TIMEOUT_MS = 30_000;

/** sync() waits for the queue and the sends to be quiet at most this many times over. */
const SYNC_ROUNDS_MAX = 16;

interface ReadTopic {
  readonly name: string;
  readonly topicId: string | null;
  readonly version: number;
  readonly partitions: Map<PartitionId, { assignment: ReplicaAssignment; state: StateRead | null }>;
}

interface StateRead {
  readonly leadership: Leadership;
  readonly controllerEpoch: number;
  readonly partitionEpoch: number;
}

export class Controller {
  private store: CoordinationStore;
  private ctx: ControllerContext | null = null;
  private activeId: number = -1;
  private stopped = false;
  /** The broker is stopping: this controller no longer runs for election. */
  private shuttingDown = false;
  private unsubscribe: (() => void) | null = null;
  private readonly queue: EventQueue;
  private readonly sender: ChannelSender;
  private readonly logger: Logger;
  private readonly random: Random;
  private readonly header: RequestHeaderFields;
  /** What the request handlers in broker-requests.ts and reassignment-requests.ts may use. */
  private readonly core: ControllerCore;
  private readonly healer: SelfHealer;
  /** Topic deletion: /admin/delete_topics, StopReplica, removing the topic's znodes. */
  private readonly deletions: TopicDeletionManager;
  /** /admin/reassign_partitions and /admin/preferred_replica_election of older tools. */
  private readonly adminZnodes: AdminZnodes;
  private readonly prober: LivenessProber | null;
  /** The /controller node of the active controller as last read (not this one's): what a probe of it fences. */
  private activeNode: { readonly czxid: number } | null = null;
  private uncleanElections = 0;

  constructor(private readonly options: ControllerOptions) {
    this.store = options.store;
    this.logger = options.logger ?? silentLogger;
    this.random = options.random ?? systemRandom;
    this.queue = new EventQueue(this.logger);
    const liveness = options.liveness;
    const probe = options.channel.probe?.bind(options.channel);
    this.prober =
      liveness != null && liveness.intervalMs > 0 && probe !== undefined
        ? new LivenessProber({
            intervalMs: liveness.intervalMs,
            refusalsToFence: Math.max(1, liveness.refusalsToFence),
            brokers: () => this.probedBrokers(),
            probe,
            onSuspect: (broker, epoch) =>
              this.queue.enqueue(`fence ${broker}`, () =>
                this.ctx !== null ? this.fenceBroker(broker, epoch) : this.fenceController(broker, epoch),
              ),
          })
        : null;
    this.sender = new ChannelSender(
      options.channel,
      this.logger,
      options.retry ??
        defaultRetryPolicy((broker, brokerEpoch) => {
          const live = this.ctx?.liveBrokers.get(broker);
          return live !== undefined && BigInt(live.epoch) === brokerEpoch;
        }),
      options.queuedRequestsPerBrokerMax,
      (broker) =>
        this.queue.enqueue(`resync ${broker}`, async () => this.resyncBroker(broker), `resync:${broker}`),
    );
    this.header = {
      controllerId: options.brokerId,
      interBrokerListener: options.interBrokerListener ?? null,
    };
    const self = this;
    this.core = {
      get ctx() {
        return self.ctx;
      },
      logger: this.logger,
      imbalancePerBrokerPercentage: options.autoLeaderRebalance?.imbalancePerBrokerPercentage ?? 10,
      writeStates: (writes) => this.writeStates(writes),
      refreshStates: (tps) => this.refreshStates(tps),
      writeAssignmentAndState: (tp, assignment, next, version) =>
        this.writeAssignmentAndState(tp, assignment, next, version),
      propagate: (changed) => this.propagate(changed),
      sendUpdateMetadata: (brokers, tps) => this.sendUpdateMetadata(brokers, tps),
      sendLeaderAndIsr: (broker, tps, created) => this.sendLeaderAndIsr(broker, tps, created),
      sendStopReplica: (brokers, tps, deletePartitions) =>
        this.sendStopReplica(brokers, tps, deletePartitions),
      reassignmentFinished: (tp, replicas) => {
        if (this.ctx?.znodeReassignments.has(partitionKey(tp))) this.adminZnodes.watchReassign();
        if (this.healer.noteFinished(tp, replicas)) {
          this.queue.enqueue(
            'selfHealingMoveFinished',
            () => this.healer.afterMoveFinished(),
            'selfHealingMoveFinished',
          );
        }
      },
      reassignmentStarted: (tp, target) => {
        if (this.healer.noteReassigned(tp, target)) {
          this.queue.enqueue(
            'selfHealingMoveFinished',
            () => this.healer.afterMoveFinished(),
            'selfHealingMoveFinished',
          );
        }
      },
    };
    const guarded = {
      core: this.core,
      store: () => this.store,
      fencedMulti: (ops: readonly Op[]) => this.fencedMulti(ops),
      onFenced: () => this.onFenced(),
      enqueue: (name: string, fn: () => Promise<void>, key?: string) => this.queue.enqueue(name, fn, key),
    };
    this.deletions = new TopicDeletionManager({
      ...guarded,
      header: this.header,
      deleteTopicEnable: options.deleteTopicEnable !== false,
      send: (broker, request, onAnswer) => this.sender.send(broker, request, onAnswer),
      sendUpdateMetadata: (brokers, tps, deleted) => this.sendUpdateMetadata(brokers, tps, deleted),
      readTopics: () => this.onTopicsChanged(),
      topicDeleted: (topic) => this.topicWatchers.delete(topic),
      deletionStarted: (topic) => {
        if (this.healer.noteTopicDeleting(topic))
          this.queue.enqueue(
            'selfHealingMoveFinished',
            () => this.healer.afterMoveFinished(),
            'selfHealingMoveFinished',
          );
      },
    });
    this.adminZnodes = new AdminZnodes(guarded);
    const clock = options.clock ?? systemClock;
    this.healer = new SelfHealer(
      {
        core: this.core,
        monotonicMs: () => clock.monotonicMs(),
        nowMs: () => clock.nowMs(),
        store: () => this.store,
        fencedMulti: (ops) => this.fencedMulti(ops),
        enqueue: (name, fn) => this.queue.enqueue(name, fn),
      },
      options.selfHealing ?? { brokerFailureTimeoutMs: -1, throttledRateBytesPerSecond: -1 },
    );
  }

  /** True while this broker is the controller. */
  /** Events waiting or running in the queue (Kafka's ControllerEventManager EventQueueSize). */
  get eventQueueSize(): number {
    return this.queue.size;
  }

  /** Unclean leader elections this broker made as controller (Kafka's UncleanLeaderElectionsPerSec count). */
  get uncleanLeaderElections(): number {
    return this.uncleanElections;
  }

  /** Has `observer` told of every event after it ran (the metrics endpoint's controller event timings). */
  observeEvents(observer: EventObserver | null): void {
    this.queue.observer = observer;
  }

  get isActive(): boolean {
    return this.ctx !== null;
  }

  /** The epoch of this controller while active, else -1. */
  get epoch(): number {
    return this.ctx?.epoch ?? -1;
  }

  /** The broker id of the active controller as last seen, -1 when unknown. */
  get activeControllerId(): number {
    return this.activeId;
  }

  /** What self-healing knows and has done, for metrics and diagnostics (empty while not active). */
  get selfHealingStatus(): SelfHealingStatus {
    return this.healer.status();
  }

  /** The context, for tests and diagnostics; null while not active. Do not change it. */
  get context(): ControllerContext | null {
    return this.ctx;
  }

  /** Runs for election; resolves once this first attempt is over (and, if won, the failover is done). */
  async start(): Promise<void> {
    this.subscribe();
    this.prober?.start();
    this.scheduleRebalance();
    await this.queue.request('elect', () => this.elect());
  }

  /** After the session expired: the owner opened a new one (and registered the broker again on it). */
  restart(store: CoordinationStore): void {
    this.queue.enqueue('restart', async () => {
      this.resign('the session was replaced');
      this.store = store;
      this.subscribe();
      await this.elect();
    });
  }

  /**
   * The broker has begun to stop: from now on this controller never wins an election (a broker that took over
   * while going away would fail over, send LeaderAndIsr to brokers that are stopping too, and leave). When active,
   * it goes on serving (the controlled shutdowns of this and other brokers) until stop().
   */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /** Resigns and stops processing; deletes /controller when this broker holds it, so another takes over now. */
  async stop(): Promise<void> {
    const stop = async (): Promise<void> => {
      if (this.stopped) return;
      const wasActive = this.ctx !== null;
      this.resign('stopping');
      this.stopped = true;
      this.prober?.stop();
      this.unsubscribe?.();
      this.cancelRebalance?.();
      if (wasActive) await this.deleteOwnControllerNode();
    };
    // Stopping is never refused: with the request bound reached it still goes to the end of the queue.
    const queued = this.queue.request('stop', stop);
    if (queued === null) {
      this.queue.enqueue('stop', stop);
      await this.queue.idle();
    } else {
      await queued;
    }
    // Resigned: nothing in flight or queued is still wanted, and nothing may wait for a broker that does not answer.
    this.sender.close();
    await this.sender.idle();
  }

  /**
   * Resolves when the controller has processed every event queued before the call, has looked again at the
   * given topics (and at the topic and deletion lists), and the brokers have answered every request this
   * caused; or when `timeoutMs` has passed (a registered broker that does not answer must not hold an admin
   * request for the whole retry time). A broker that is not the controller resolves once its queue drains.
   */
  async sync(topics: readonly string[] = [], timeoutMs = SYNC_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([this.settle(topics), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async settle(topics: readonly string[]): Promise<void> {
    const done = this.queue.request('sync', async () => {
      if (this.ctx === null || this.stopped) return;
      await this.onTopicsChanged();
      for (const t of topics) if (this.ctx !== null) await this.onPartitionsModified(t);
      if (this.ctx !== null) await this.deletions.onDeletionsChanged();
    });
    if (done !== null) await done;
    // Answers from brokers may queue more events (a deletion completes when the last StopReplica is answered),
    // and those events may send more: wait until both are quiet, a bounded number of rounds.
    for (let round = 0; round < SYNC_ROUNDS_MAX; round++) {
      await this.queue.idle();
      await this.sender.idle();
      if (this.queue.size === 0 && this.sender.pending === 0) break;
    }
  }

  alterPartition(request: AlterPartitionRequest, version: number): Promise<AlterPartitionResponse> {
    return (
      this.queue.request('alterPartition', () => onAlterPartition(this.core, request, version)) ??
      Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.REQUEST_TIMED_OUT, topics: [] })
    );
  }

  controlledShutdown(request: ControlledShutdownRequest): Promise<ControlledShutdownResponse> {
    return (
      this.queue.request('controlledShutdown', () => onControlledShutdown(this.core, request)) ??
      Promise.resolve({ errorCode: ErrorCode.REQUEST_TIMED_OUT, remainingPartitions: [] })
    );
  }

  alterPartitionReassignments(
    request: AlterPartitionReassignmentsRequest,
  ): Promise<AlterPartitionReassignmentsResponse> {
    return (
      this.queue.request('alterPartitionReassignments', () => onAlterReassignments(this.core, request)) ??
      Promise.resolve({
        throttleTimeMs: 0,
        errorCode: ErrorCode.REQUEST_TIMED_OUT,
        errorMessage: null,
        responses: [],
      })
    );
  }

  listPartitionReassignments(
    request: ListPartitionReassignmentsRequest,
  ): Promise<ListPartitionReassignmentsResponse> {
    return (
      this.queue.request('listPartitionReassignments', async () => onListReassignments(this.core, request)) ??
      Promise.resolve({
        throttleTimeMs: 0,
        errorCode: ErrorCode.REQUEST_TIMED_OUT,
        errorMessage: null,
        topics: [],
      })
    );
  }

  /**
   * Kafka's automatic preferred leader election: for each broker, when more than the configured share of the
   * partitions it prefers to lead are led by others, moves leadership back where the preferred replica is
   * alive and in sync. Runs on its timer when autoLeaderRebalance is set; answers the partitions moved.
   */
  checkLeaderBalance(): Promise<TopicPartition[]> {
    return (
      this.queue.request('checkLeaderBalance', () => onCheckLeaderBalance(this.core)) ?? Promise.resolve([])
    );
  }

  /**
   * unclean.leader.election.enable may have been turned on (a dynamic broker, cluster-default or topic config
   * changed): partitions without a leader are elected again at once, as Kafka's controller does on its
   * UncleanLeaderElectionEnable and TopicUncleanLeaderElectionEnable events, rather than at the next broker
   * change. Nothing happens on a broker that is not the controller, or when no partition lacks a leader.
   */
  uncleanLeaderElectionMayBeEnabled(): void {
    this.queue.enqueue(
      'uncleanLeaderElectionEnable',
      async () => {
        const ctx = this.ctx;
        if (ctx === null || this.stopped) return;
        const leaderless = [...ctx.allPartitions()]
          .filter(({ topic, entry }) => entry.leadership?.leader === NO_LEADER && !ctx.isDeleting(topic))
          .map(({ topic, partition }) => ({ topic, partition }));
        if (leaderless.length === 0) return;
        this.propagate(await this.reconcile(leaderless));
      },
      'uncleanLeaderElectionEnable',
    );
  }

  /** Every partition brought to what the rules give for the current brokers, and the changes sent. */
  private async reconcileAll(): Promise<void> {
    const ctx = this.ctx;
    if (ctx === null || this.stopped) return;
    this.propagate(await this.reconcile([...ctx.allPartitions()]));
  }

  electLeaders(request: ElectLeadersRequest): Promise<ElectLeadersResponse> {
    return (
      this.queue.request('electLeaders', () => onElectLeaders(this.core, request)) ??
      Promise.resolve({
        throttleTimeMs: 0,
        errorCode: ErrorCode.REQUEST_TIMED_OUT,
        replicaElectionResults: [],
      })
    );
  }

  // ---- election -------------------------------------------------------------------------------------------

  private subscribe(): void {
    this.unsubscribe?.();
    const store = this.store;
    this.unsubscribe = store.onSessionEvent((event) => {
      if (event === 'reconnected') {
        // A read that failed while disconnected set no watch: look at everything again.
        this.watchController();
        this.watchBrokers();
        this.watchTopics();
        this.deletions.watch();
        this.adminZnodes.watchReassign();
        this.adminZnodes.watchPreferredElection();
        this.watchLogDirEvents();
        // A state write that failed meanwhile (an election, a dead broker leaving an ISR, a new partition's first
        // state) is not retried by the event that made it: decide every partition again. Kafka's controller
        // retries its ZooKeeper writes until the session is connected again (retryRequestsUntilConnected).
        this.queue.enqueue('reconcileAfterReconnect', () => this.reconcileAll(), 'reconcileAfterReconnect');
        return;
      }
      if (event !== 'expired' && event !== 'closed') return;
      this.queue.enqueue('sessionEnded', async () => {
        if (this.store === store) this.resign(`the store session ${event}`);
      });
    });
  }

  private watchController = (): void => {
    this.queue.enqueue('controllerChange', () => this.onControllerChange(), 'controllerChange');
  };

  private async onControllerChange(): Promise<void> {
    if (this.stopped) return;
    const node = await this.store.get(CONTROLLER_PATH);
    const holder = node.ok ? decodeController(node.value.data) : null;
    const ours = node.ok && node.value.stat.ephemeralOwner === this.store.sessionId;
    if (this.ctx !== null && !ours)
      this.resign(`controller moved to ${holder?.ok ? holder.value.brokerId : 'nobody'}`);
    await this.elect();
  }

  private async elect(): Promise<void> {
    if (this.stopped || this.ctx !== null) return;
    const existing = await this.store.exists(CONTROLLER_PATH, this.watchController);
    if (!existing.ok) {
      this.logger.warn(`reading ${CONTROLLER_PATH} failed: ${existing.code}`);
      return;
    }
    if (existing.value !== null) {
      if (existing.value.ephemeralOwner === this.store.sessionId) {
        // Left by this session when a failover did not complete: give the election up and run again.
        await this.store.delete(CONTROLLER_PATH, existing.value.version);
        return;
      }
      await this.noteActiveController();
      return;
    }
    if (this.shuttingDown) {
      this.activeId = -1;
      this.logger.info(`broker ${this.options.brokerId} is stopping: not running for controller`);
      return;
    }
    const epochNode = await this.readControllerEpoch();
    if (epochNode === null) return;
    const newEpoch = epochNode.epoch + 1;
    const registration = encodeController({
      brokerId: this.options.brokerId,
      timestampMs: (this.options.clock ?? systemClock).nowMs(),
      kraftControllerEpoch: -1,
    });
    const result = await this.store.multi([
      { op: 'create', path: CONTROLLER_PATH, data: registration, mode: 'ephemeral' },
      {
        op: 'set',
        path: CONTROLLER_EPOCH_PATH,
        data: encodeControllerEpoch(newEpoch),
        version: epochNode.version,
      },
    ]);
    if (!result.ok) {
      // Another broker won (NODEEXISTS) or incremented the epoch first (BADVERSION); the watch on /controller
      // tells us when to run again.
      this.logger.info(`broker ${this.options.brokerId} lost the controller election: ${result.code}`);
      await this.noteActiveController();
      return;
    }
    const set = result.value[1];
    if (set?.op !== 'set') throw new Error('multi answered without the set of the controller epoch');
    if (this.shuttingDown) {
      // The broker began to stop while the election was in flight: give the won election up at once.
      this.logger.info(
        `broker ${this.options.brokerId} is stopping: giving up the controller epoch ${newEpoch}`,
      );
      await this.deleteOwnControllerNode();
      return;
    }
    this.logger.info(`broker ${this.options.brokerId} is the controller, epoch ${newEpoch}`);
    this.activeId = this.options.brokerId;
    await this.becomeController(newEpoch, set.stat.version);
  }

  private async noteActiveController(): Promise<void> {
    const node = await this.store.get(CONTROLLER_PATH);
    if (!node.ok) {
      this.activeId = -1;
      return;
    }
    const decoded = decodeController(node.value.data);
    this.activeId = decoded.ok ? decoded.value.brokerId : -1;
    const stat = node.value.stat;
    this.activeNode =
      decoded.ok && stat.ephemeralOwner !== this.store.sessionId ? { czxid: stat.czxid } : null;
  }

  private async readControllerEpoch(): Promise<{ epoch: number; version: number } | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const node = await this.store.get(CONTROLLER_EPOCH_PATH);
      if (node.ok) {
        const decoded = decodeControllerEpoch(node.value.data);
        if (!decoded.ok) {
          this.logger.error(decoded.error.message);
          return null;
        }
        return { epoch: decoded.value, version: node.value.stat.version };
      }
      if (node.code !== 'NONODE') return null;
      const created = await this.store.create(CONTROLLER_EPOCH_PATH, encodeControllerEpoch(0), 'persistent');
      if (!created.ok && created.code !== 'NODEEXISTS') return null;
    }
    return null;
  }

  private resign(reason: string): void {
    if (this.ctx === null) return;
    this.logger.info(
      `broker ${this.options.brokerId} resigns as controller (epoch ${this.ctx.epoch}): ${reason}`,
    );
    this.ctx = null;
    this.healer.reset();
    this.sender.dropQueued();
    if (this.activeId === this.options.brokerId) this.activeId = -1;
  }

  /** The brokers the liveness prober watches: the live ones but this one, while this controller is active. */
  private *probedBrokers(): Generator<readonly [BrokerId, number]> {
    const ctx = this.ctx;
    if (ctx === null) {
      // Not active: watch the active controller, keyed by its /controller node (a new one is a new controllership).
      const active = this.activeId as BrokerId;
      if (this.activeNode !== null && active >= 0 && active !== this.options.brokerId && !this.stopped)
        yield [active, this.activeNode.czxid];
      return;
    }
    for (const [id, b] of ctx.liveBrokers) if (id !== this.options.brokerId) yield [id, b.epoch];
  }

  /**
   * A broker refused the prober's connections (its process is gone): it is fenced through the store, by deleting
   * its registration, in a transaction guarded by this controller's epoch, and only when that registration is
   * still the one suspected (its czxid is the broker epoch). From that write on the broker is dead for the cluster
   * exactly as after its session expired: its partitions get new leaders at a higher leader epoch, it leaves every
   * ISR, and AlterPartition from that broker epoch is refused. A broker that was in fact alive sees its
   * registration go and registers again with a new epoch (broker.ts), as after a session expiry.
   */
  private async fenceBroker(broker: BrokerId, epoch: number): Promise<void> {
    const ctx = this.ctx;
    if (ctx === null || ctx.liveBrokers.get(broker)?.epoch !== epoch) return;
    const path = brokerPath(broker);
    const node = await this.store.get(path);
    if (!node.ok || node.value.stat.czxid !== epoch || this.ctx !== ctx) return;
    const deleted = await this.fencedMulti([{ op: 'delete', path, version: node.value.stat.version }]);
    if ('fenced' in deleted) {
      this.onFenced();
      return;
    }
    if (!deleted.ok) {
      this.logger.warn(`fencing broker ${broker} failed: ${deleted.code}`);
      return;
    }
    this.logger.warn(
      `broker ${broker} (epoch ${epoch}) refuses connections: fenced by deleting its registration before its session expired`,
    );
    await this.onBrokersChanged();
  }

  /**
   * The active controller's broker refused this broker's probes (its process is gone). Any broker may fence it:
   * /controller and that broker's registration are deleted in one transaction, only while /controller is still the
   * node suspected and both belong to the same (dead) session. The election that follows makes a new controller,
   * with a higher controller epoch that fences anything the old one might still send, and it finds the dead broker
   * unregistered, so its partitions get new leaders at once. Several brokers racing: one transaction wins, the
   * others fail on the versions.
   */
  private async fenceController(broker: BrokerId, czxid: number): Promise<void> {
    if (this.ctx !== null || this.stopped || this.activeId !== broker) return;
    const [controller, registration] = await Promise.all([
      this.store.get(CONTROLLER_PATH),
      this.store.get(brokerPath(broker)),
    ]);
    if (!controller.ok || controller.value.stat.czxid !== czxid) return;
    const decoded = decodeController(controller.value.data);
    if (!decoded.ok || decoded.value.brokerId !== broker) return;
    const owner = controller.value.stat.ephemeralOwner;
    const ops: Op[] = [{ op: 'delete', path: CONTROLLER_PATH, version: controller.value.stat.version }];
    if (registration.ok && registration.value.stat.ephemeralOwner === owner) {
      ops.push({ op: 'delete', path: brokerPath(broker), version: registration.value.stat.version });
    }
    const deleted = await this.store.multi(ops);
    if (!deleted.ok) return;
    this.logger.warn(
      `controller broker ${broker} refuses connections: fenced by deleting /controller and its registration before its session expired`,
    );
  }

  private async deleteOwnControllerNode(): Promise<void> {
    const node = await this.store.exists(CONTROLLER_PATH);
    if (node.ok && node.value !== null && node.value.ephemeralOwner === this.store.sessionId) {
      await this.store.delete(CONTROLLER_PATH, node.value.version);
    }
  }

  /** Fenced: another controller has taken over. Resign and look at /controller again. */
  private onFenced(): void {
    this.resign('a write found a newer controller epoch');
    this.queue.enqueue('controllerChange', () => this.onControllerChange(), 'controllerChange');
  }

  // ---- failover -------------------------------------------------------------------------------------------

  private watchBrokers = (): void => {
    this.queue.enqueue('brokerChange', () => this.onBrokersChanged(), 'brokerChange');
  };
  private watchTopics = (): void => {
    this.queue.enqueue('topicChange', () => this.onTopicsChanged(), 'topicChange');
  };
  private watchLogDirEvents = (): void => {
    this.queue.enqueue('logDirEvents', () => this.onLogDirEvents(), 'logDirEvents');
  };
  /** One watcher function per topic: stores count a function registered twice on a path once. */
  private readonly topicWatchers = new Map<string, () => void>();
  private watchTopic(name: string): () => void {
    let watcher = this.topicWatchers.get(name);
    if (watcher === undefined) {
      watcher = () => {
        this.queue.enqueue(
          `partitionModifications ${name}`,
          () => this.onPartitionsModified(name),
          `pm:${name}`,
        );
      };
      this.topicWatchers.set(name, watcher);
    }
    return watcher;
  }

  private async becomeController(epoch: number, epochZkVersion: number): Promise<void> {
    const [brokers, topicNames, deletions] = await Promise.all([
      readLiveBrokers(this.store, this.watchBrokers, () => this.watchBrokers),
      this.store.children(TOPICS_PATH, this.watchTopics),
      this.store.children(DELETE_TOPICS_PATH, this.deletions.watch),
    ]);
    if (!brokers.ok || !topicNames.ok || !deletions.ok) {
      this.logger.error('reading the cluster at controller failover failed; resigning');
      await this.deleteOwnControllerNode();
      return;
    }
    const topics = await Promise.all(topicNames.value.map((t) => this.readTopic(t, true)));
    // Everything read: build the context in one step.
    const ctx = new ControllerContext(epoch, epochZkVersion);
    for (const [id, b] of brokers.brokers) ctx.liveBrokers.set(id, b);
    ctx.registeredBrokers = brokers.registered;
    for (const t of topics) if (t !== null) this.putReadTopic(ctx, t);
    queueDeletions(ctx, deletions.value);
    this.ctx = ctx;
    for (const bad of brokers.bad) this.logger.warn(`ignoring broker registration ${bad}`);
    await this.assignMissingTopicIds(topics);
    if (this.ctx !== ctx) return;
    this.sender.brokersChanged(registrations(ctx));
    const changed = await this.reconcile([...ctx.allPartitions()]);
    if (this.ctx !== ctx) return;
    const all = [...ctx.allPartitions()].map(({ topic, partition }) => ({ topic, partition }));
    const live = [...ctx.liveBrokers.keys()];
    this.sendUpdateMetadata(live, all);
    const created = new Set(changed.filter((c) => c.created).map((c) => partitionKey(c.tp)));
    for (const b of live) this.sendLeaderAndIsr(b, ctx.partitionsOn(b), created);
    await finishSyncedReassignments(this.core, all);
    await this.deletions.processDeletions();
    await this.adminZnodes.onReassignZnode();
    await this.adminZnodes.onPreferredElectionZnode();
    await this.onLogDirEvents();
    // Last: self-healing's takeover may cancel moves, which needs the brokers to have the state sent above.
    if (this.ctx === ctx) await this.healer.onFailover();
  }

  // ---- reading the store ------------------------------------------------------------------------------------

  private async readTopic(name: string, watch: boolean): Promise<ReadTopic | null> {
    const node = await this.store.get(topicPath(name), watch ? this.watchTopic(name) : undefined);
    if (!node.ok) {
      if (node.code !== 'NONODE') this.logger.warn(`reading topic ${name} failed: ${node.code}`);
      return null;
    }
    const decoded = decodeTopicAssignment(node.value.data);
    if (!decoded.ok) {
      this.logger.error(`ignoring topic ${name}: ${decoded.error.message}`);
      return null;
    }
    const partitions = new Map<PartitionId, { assignment: ReplicaAssignment; state: StateRead | null }>();
    const states = await Promise.all(
      [...decoded.value.partitions.keys()].map(
        async (p) => [p, await this.readState({ topic: name, partition: p })] as const,
      ),
    );
    for (const [p, state] of states)
      partitions.set(p, { assignment: decoded.value.partitions.get(p)!, state });
    return { name, topicId: decoded.value.topicId, version: node.value.stat.version, partitions };
  }

  private async readState(tp: TopicPartition): Promise<StateRead | null> {
    const node = await this.store.get(partitionStatePath(tp.topic, tp.partition));
    if (!node.ok) return null;
    const decoded = decodePartitionState(node.value.data);
    if (!decoded.ok) {
      this.logger.error(`ignoring the state of ${tp.topic}-${tp.partition}: ${decoded.error.message}`);
      return null;
    }
    const s = decoded.value;
    return {
      leadership: {
        leader: s.leader,
        leaderEpoch: s.leaderEpoch,
        isr: s.isr,
        leaderRecoveryState: s.leaderRecoveryState,
      },
      controllerEpoch: s.controllerEpoch,
      partitionEpoch: node.value.stat.version,
    };
  }

  private putReadTopic(ctx: ControllerContext, t: ReadTopic): void {
    const partitions = new Map<PartitionId, PartitionEntry>();
    for (const [p, { assignment, state }] of t.partitions) partitions.set(p, entryOf(assignment, state));
    // A topic written by a Kafka older than 2.8 has no id until assignMissingTopicIds gives it one.
    ctx.putTopic({ name: t.name, topicId: t.topicId ?? '', partitions });
  }

  /** Topics without an id get one, written back to their assignment as Kafka's controller does. */
  private async assignMissingTopicIds(topics: readonly (ReadTopic | null)[]): Promise<void> {
    for (const t of topics) {
      if (t === null || t.topicId !== null) continue;
      const topicId = newUuid(this.random);
      const partitions = new Map([...t.partitions].map(([p, v]) => [p, v.assignment]));
      const result = await this.fencedMulti([
        {
          op: 'set',
          path: topicPath(t.name),
          data: encodeTopicAssignment({ topicId, partitions }),
          version: t.version,
        },
      ]);
      if ('fenced' in result) return this.onFenced();
      const entry = this.ctx?.topics.get(t.name);
      if (result.ok && entry !== undefined) {
        entry.topicId = topicId;
        this.ctx!.putTopic(entry);
      }
    }
  }

  // ---- writing partition states -------------------------------------------------------------------------

  /** A multi guarded by the controller epoch's version; answers fenced when another controller has taken over. */
  private async fencedMulti(ops: readonly Op[]): Promise<MultiResult | Fenced> {
    const ctx = this.ctx;
    if (ctx === null) return { fenced: true };
    const result = await this.store.multi([
      { op: 'check', path: CONTROLLER_EPOCH_PATH, version: ctx.epochZkVersion },
      ...ops,
    ]);
    if (
      !result.ok &&
      result.failedOpIndex === 0 &&
      (result.code === 'BADVERSION' || result.code === 'NONODE')
    ) {
      return { fenced: true };
    }
    return result;
  }

  /**
   * Writes the states and applies those that succeeded. Answers the partitions written and those whose node had
   * changed under the controller (to read again), or null when fenced.
   *
   * Writes go in batches, one guarded transaction each (with the partition nodes a new state needs), because
   * the store makes every transaction durable on its own: a 1000-partition topic would otherwise cost three
   * thousand fsyncs. A batch that fails for one partition is retried one transaction per partition, which
   * isolates the conflict.
   */
  private async writeStates(
    writes: readonly StateWrite[],
  ): Promise<{ written: StateWrite[]; conflicts: TopicPartition[] } | null> {
    const ctx = this.ctx!;
    const outcomes: { w: StateWrite; outcome: WriteOutcome }[] = [];
    for (let start = 0; start < writes.length; start += STATE_WRITES_PER_TRANSACTION) {
      const chunk = writes.slice(start, start + STATE_WRITES_PER_TRANSACTION);
      const batched = await this.writeBatch(ctx, chunk);
      if (batched === 'fenced') {
        this.onFenced();
        return null;
      }
      if (batched !== null) {
        outcomes.push(...batched);
        continue;
      }
      await this.ensurePartitionNodes(chunk.filter((w) => w.expectedVersion === -1).map((w) => w.tp));
      const single = await Promise.all(
        chunk.map(async (w) => ({ w, result: await this.fencedMulti([stateOp(ctx, w)]) })),
      );
      if (single.some((r) => 'fenced' in r.result)) {
        this.onFenced();
        return null;
      }
      for (const { w, result } of single) {
        const r = result as MultiResult;
        const op = r.ok ? r.value[1] : undefined;
        outcomes.push({
          w,
          outcome: r.ok
            ? { ok: true, version: op?.op === 'set' ? op.stat.version : 0 }
            : { ok: false, code: r.code },
        });
      }
    }
    if (this.ctx !== ctx) return null;
    const written: StateWrite[] = [];
    const conflicts: TopicPartition[] = [];
    for (const { w, outcome } of outcomes) {
      const entry = ctx.partition(w.tp);
      if (outcome.ok) {
        if (entry === undefined) continue;
        entry.leadership = w.next;
        entry.partitionEpoch = outcome.version;
        entry.controllerEpoch = ctx.epoch;
        written.push(w);
      } else if (
        outcome.code === 'BADVERSION' ||
        outcome.code === 'NODEEXISTS' ||
        outcome.code === 'NONODE'
      ) {
        conflicts.push(w.tp);
      } else {
        this.logger.warn(`writing the state of ${w.tp.topic}-${w.tp.partition} failed: ${outcome.code}`);
      }
    }
    return { written, conflicts };
  }

  /** One transaction for a batch of writes; null when it failed on a partition (retry one by one). */
  private async writeBatch(
    ctx: ControllerContext,
    chunk: readonly StateWrite[],
  ): Promise<{ w: StateWrite; outcome: WriteOutcome }[] | 'fenced' | null> {
    const parents = await this.missingPartitionNodes(
      chunk.filter((w) => w.expectedVersion === -1).map((w) => w.tp),
    );
    if (parents === null) return null;
    const empty = new Uint8Array(0);
    const ops: Op[] = [
      ...parents.map((path): Op => ({ op: 'create', path, data: empty, mode: 'persistent' })),
      ...chunk.map((w) => stateOp(ctx, w)),
    ];
    const result = await this.fencedMulti(ops);
    if ('fenced' in result) return 'fenced';
    if (!result.ok) return null;
    // Result 0 is the epoch check, then the parents, then one per write.
    return chunk.map((w, i) => {
      const op = result.value[1 + parents.length + i];
      return { w, outcome: { ok: true, version: op?.op === 'set' ? op.stat.version : 0 } };
    });
  }

  /** The partition nodes (and partitions nodes) that new states need and that do not exist, parents first. */
  private async missingPartitionNodes(tps: readonly TopicPartition[]): Promise<string[] | null> {
    const out: string[] = [];
    for (const topic of new Set(tps.map((tp) => tp.topic))) {
      const existing = await this.store.children(topicPartitionsPath(topic));
      if (!existing.ok && existing.code !== 'NONODE') return null;
      if (!existing.ok) out.push(topicPartitionsPath(topic));
      const present = new Set(existing.ok ? existing.value : []);
      for (const tp of tps) {
        if (tp.topic === topic && !present.has(String(tp.partition)))
          out.push(partitionPath(topic, tp.partition));
      }
    }
    return out;
  }

  private async ensurePartitionNodes(tps: readonly TopicPartition[]): Promise<void> {
    const empty = new Uint8Array(0);
    const topics = new Set(tps.map((tp) => tp.topic));
    await Promise.all([...topics].map((t) => this.store.create(topicPartitionsPath(t), empty, 'persistent')));
    await Promise.all(
      tps.map((tp) => this.store.create(partitionPath(tp.topic, tp.partition), empty, 'persistent')),
    );
  }

  /**
   * Reads states again after a conflict and puts them into the context. Answers the partitions whose state was
   * not the one the controller knew: mostly its own write whose reply was lost (ZooKeeper committed it, then the
   * connection dropped and the client answered CONNECTIONLOSS), which no broker has been sent yet.
   */
  private async refreshStates(tps: readonly TopicPartition[]): Promise<TopicPartition[]> {
    const reads = await Promise.all(tps.map(async (tp) => ({ tp, state: await this.readState(tp) })));
    const ctx = this.ctx;
    if (ctx === null) return [];
    const changed: TopicPartition[] = [];
    for (const { tp, state } of reads) {
      const entry = ctx.partition(tp);
      if (entry === undefined || state === null) continue;
      if (state.partitionEpoch !== entry.partitionEpoch) changed.push(tp);
      entry.leadership = state.leadership;
      entry.partitionEpoch = state.partitionEpoch;
      entry.controllerEpoch = state.controllerEpoch;
    }
    return changed;
  }

  /**
   * Reads a partition's assignment and state back into the context, after a write of both whose outcome is not
   * known. Answers what was read and whether it differs from what the context held; null when a read failed or the
   * partition is gone (the context is then left as it was).
   */
  private async readBackPartition(
    tp: TopicPartition,
  ): Promise<(StateRead & { assignment: ReplicaAssignment; changed: boolean }) | null> {
    const [node, state] = await Promise.all([this.store.get(topicPath(tp.topic)), this.readState(tp)]);
    const entry = this.ctx?.partition(tp);
    if (!node.ok || state === null || entry === undefined) return null;
    const decoded = decodeTopicAssignment(node.value.data);
    const assignment = decoded.ok ? decoded.value.partitions.get(tp.partition) : undefined;
    if (assignment === undefined) return null;
    const changed =
      state.partitionEpoch !== entry.partitionEpoch || !sameAssignment(assignment, entry.assignment);
    entry.assignment = assignment;
    entry.leadership = state.leadership;
    entry.partitionEpoch = state.partitionEpoch;
    entry.controllerEpoch = state.controllerEpoch;
    return { ...state, assignment, changed };
  }

  /**
   * Reads unclean.leader.election.enable of each topic (topic config, else the broker's). A topic whose config
   * could not be read (the store unreachable) does not allow it: its override may say false, and Kafka's
   * controller does not elect a partition whose topic config read failed (KafkaZkClient.getLogConfigs). The
   * partition is left without a leader, its last ISR member kept, until the next election is asked.
   */
  private async uncleanAllowed(topics: ReadonlySet<string>): Promise<Map<string, boolean>> {
    const setting = this.options.uncleanLeaderElectionEnable;
    const fallback = typeof setting === 'function' ? setting() : (setting ?? false);
    const out = new Map<string, boolean>();
    await Promise.all(
      [...topics].map(async (t) => {
        const node = await this.store.get(topicConfigPath(t));
        if (!node.ok && node.code !== 'NONODE') {
          this.logger.warn(`reading the config of ${t} failed (${node.code}): no unclean leader election`);
          out.set(t, false);
          return;
        }
        // Decoded as Kafka's getLogConfigs does (the version not looked at, no "config" object: no override); a
        // value that is not a string throws there, and no partition of the topic is elected uncleanly.
        const config = node.ok ? decodeEntityConfig(node.value.data) : null;
        if (config !== null && !config.ok) {
          this.logger.warn(
            `the config of ${t} is unreadable (${config.error.message}): no unclean leader election`,
          );
          out.set(t, false);
          return;
        }
        const value = config?.value[UNCLEAN_KEY];
        out.set(t, value === undefined ? fallback : value.trim().toLowerCase() === 'true');
      }),
    );
    return out;
  }

  /**
   * Brings partitions to the leadership the rules give for the current brokers (new partitions get their
   * first leader; offline ones a new leader; dead followers leave the ISR), writes and applies the changes,
   * and answers what changed. Topics being deleted are left alone.
   */
  private async reconcile(
    tps: readonly TopicPartition[],
  ): Promise<{ tp: TopicPartition; created: boolean }[]> {
    const changed: { tp: TopicPartition; created: boolean }[] = [];
    // States found changed under the controller, read back after a conflict: see the end.
    const readBack = new Map<string, TopicPartition>();
    let pending = tps.map((tp) => ({ topic: tp.topic, partition: tp.partition }));
    for (let attempt = 0; attempt < 3 && pending.length > 0; attempt++) {
      const ctx = this.ctx;
      if (ctx === null) return changed;
      let writes = this.planReconcile(ctx, pending, null);
      const undecided = new Set(writes.undecided.map((tp) => tp.topic));
      if (undecided.size > 0) {
        const allowed = await this.uncleanAllowed(undecided);
        if (this.ctx !== ctx) return changed;
        writes = this.planReconcile(ctx, pending, allowed);
      }
      const outcome = await this.writeStates(writes.writes);
      if (outcome === null) return changed;
      for (const w of outcome.written) {
        changed.push({ tp: w.tp, created: w.expectedVersion === -1 });
        if (w.next.leader !== NO_LEADER && writes.unclean.has(partitionKey(w.tp))) {
          this.uncleanElections++;
          this.logger.warn(
            `unclean leader election for ${w.tp.topic}-${w.tp.partition}: broker ${w.next.leader} leads; data may be lost`,
          );
        }
      }
      if (outcome.conflicts.length > 0) {
        for (const tp of await this.refreshStates(outcome.conflicts)) readBack.set(partitionKey(tp), tp);
      }
      pending = outcome.conflicts;
    }
    // A state read back may be this controller's own election whose reply was lost: written, yet never sent, and
    // the next attempt finds nothing left to change. It is sent as a change, or its new leader would never learn
    // that it leads. (Kafka's controller retries the write, fails on the version, reads the state and elects
    // again, which sends it.)
    for (const c of changed) readBack.delete(partitionKey(c.tp));
    for (const tp of readBack.values()) changed.push({ tp, created: false });
    return changed;
  }

  private planReconcile(
    ctx: ControllerContext,
    tps: readonly TopicPartition[],
    unclean: ReadonlyMap<string, boolean> | null,
  ): { writes: StateWrite[]; undecided: TopicPartition[]; unclean: Set<string> } {
    const writes: StateWrite[] = [];
    const undecided: TopicPartition[] = [];
    const uncleanKeys = new Set<string>();
    for (const tp of tps) {
      const entry = ctx.partition(tp);
      if (entry === undefined || ctx.isDeleting(tp.topic)) continue;
      if (entry.leadership === null) {
        const first = initialLeadership(entry.assignment.replicas, ctx.livenessFor(tp));
        if (first !== null) writes.push({ tp, next: first, expectedVersion: -1 });
        continue;
      }
      const plan = reconcileLeadership(
        entry.assignment.replicas,
        entry.leadership,
        ctx.livenessFor(tp),
        unclean === null ? null : (unclean.get(tp.topic) ?? false),
      );
      if (plan.kind === 'needsUncleanDecision') undecided.push(tp);
      else if (plan.kind === 'change') {
        writes.push({ tp, next: plan.next, expectedVersion: entry.partitionEpoch });
        if (plan.unclean) uncleanKeys.add(partitionKey(tp));
      }
    }
    return { writes, undecided, unclean: uncleanKeys };
  }

  // ---- sending --------------------------------------------------------------------------------------------

  private sendLeaderAndIsr(
    broker: BrokerId,
    tps: readonly TopicPartition[],
    created: ReadonlySet<string>,
  ): void {
    const ctx = this.ctx;
    if (ctx === null) return;
    // As Kafka's replica state machine, a replica whose deletion has begun is not brought online again (a resync,
    // a log directory event): the broker would reopen the log it deleted, and nothing would delete it again.
    const wanted = tps.filter((tp) => !replicaDeletionBegun(ctx, tp, broker));
    if (wanted.length === 0) return;
    const request = buildLeaderAndIsr(ctx, this.header, broker, wanted, (tp) =>
      created.has(partitionKey(tp)),
    );
    if (request === null) return;
    const epoch = ctx.liveBrokers.get(broker)?.epoch;
    this.sender.send(broker, { kind: 'leaderAndIsr', request }, (answer) => {
      if (answer?.kind !== 'leaderAndIsr') return;
      const offline = storageErrorPartitions(ctx, answer.response);
      if (offline.length === 0) return;
      this.queue.enqueue(`offlineReplicas ${broker}`, () =>
        this.onReplicasOffline(ctx, broker, epoch, offline),
      );
    });
  }

  /**
   * A broker answered KAFKA_STORAGE_ERROR for partitions: their logs are in a failed directory (Kafka's
   * OfflineReplica). The broker counts as dead for them: leadership moves to another in-sync replica, it leaves
   * their ISRs, and every broker learns the offline replicas.
   */
  private async onReplicasOffline(
    ctx: ControllerContext,
    broker: BrokerId,
    epoch: number | undefined,
    tps: readonly TopicPartition[],
  ): Promise<void> {
    if (this.ctx !== ctx || ctx.liveBrokers.get(broker)?.epoch !== epoch) return;
    const fresh = ctx.markReplicasOffline(broker, tps);
    if (fresh.length === 0) return;
    this.logger.warn(
      `replicas offline on broker ${broker} (log directory failure): ${fresh.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`,
    );
    const changed = await this.reconcile(fresh);
    if (this.ctx !== ctx) return;
    this.propagate(changed);
    this.sendUpdateMetadata([...ctx.liveBrokers.keys()], fresh);
  }

  /** /log_dir_event_notification: each named broker is asked, by a LeaderAndIsr, which replicas are offline. */
  private async onLogDirEvents(): Promise<void> {
    const ctx = this.ctx;
    if (ctx === null) return;
    const taken = await takeLogDirEvents(this.store, this.watchLogDirEvents, (name) =>
      this.logger.warn(`ignoring log dir event ${name}`),
    );
    if (!taken.ok) {
      this.logger.warn(`reading log dir events failed: ${taken.code}`);
      return;
    }
    if (this.ctx !== ctx) return;
    for (const broker of taken.value) {
      if (!ctx.liveBrokers.has(broker)) continue;
      this.logger.info(`broker ${broker} reported a log directory failure`);
      this.sendLeaderAndIsr(broker, ctx.partitionsOn(broker), new Set());
    }
  }

  private sendUpdateMetadata(
    brokers: readonly BrokerId[],
    tps: readonly TopicPartition[],
    deleted?: ReadonlySet<string>,
  ): void {
    const ctx = this.ctx;
    if (ctx === null) return;
    // As Kafka's ControllerBrokerRequestBatch, a topic whose deletion the brokers were told of goes out as deleted
    // (leader -2) in every UpdateMetadata: a broker that comes back while the deletion waits for it does not show
    // the topic again. (Only once told: a queued deletion may yet be dropped, with delete.topic.enable=false.)
    const deleting = new Set(deleted);
    for (const [topic, progress] of ctx.deletions)
      if (progress.started && ctx.isDeleting(topic)) deleting.add(topic);
    for (const b of brokers) {
      this.sender.send(b, {
        kind: 'updateMetadata',
        request: buildUpdateMetadata(ctx, this.header, b, tps, deleting),
      });
    }
  }

  /** LeaderAndIsr to the live replicas of the changed partitions, then UpdateMetadata to every live broker. */
  private propagate(changed: readonly { tp: TopicPartition; created: boolean }[]): void {
    const ctx = this.ctx;
    if (ctx === null || changed.length === 0) return;
    const byBroker = new Map<BrokerId, TopicPartition[]>();
    for (const { tp } of changed) {
      const entry = ctx.partition(tp);
      if (entry === undefined) continue;
      for (const r of replicasOf(entry)) {
        if (!ctx.liveBrokers.has(r)) continue;
        const list = byBroker.get(r) ?? [];
        list.push(tp);
        byBroker.set(r, list);
      }
    }
    const created = new Set(changed.filter((c) => c.created).map((c) => partitionKey(c.tp)));
    for (const [b, tps] of byBroker) this.sendLeaderAndIsr(b, tps, created);
    this.sendUpdateMetadata(
      [...ctx.liveBrokers.keys()],
      changed.map((c) => c.tp),
    );
  }

  /** Sends a broker everything again, after requests to it were refused because its queue was full. */
  private async resyncBroker(broker: BrokerId): Promise<void> {
    const ctx = this.ctx;
    if (ctx === null || !ctx.liveBrokers.has(broker)) return;
    this.logger.info(`broker ${broker} caught up; sending it the whole state again`);
    const all = [...ctx.allPartitions()].map(({ topic, partition }) => ({ topic, partition }));
    this.sendUpdateMetadata([broker], all);
    this.sendLeaderAndIsr(broker, ctx.partitionsOn(broker), new Set());
    // A StopReplica for a deletion may have been refused: let the deletions go round again.
    await this.deletions.onBrokerResynced(broker);
  }

  // ---- watch events ---------------------------------------------------------------------------------------

  private async onBrokersChanged(): Promise<void> {
    if (this.ctx === null) return;
    const read = await readLiveBrokers(this.store, this.watchBrokers, () => this.watchBrokers);
    const ctx = this.ctx;
    if (ctx === null) return;
    if (!read.ok) {
      this.logger.warn(`reading the brokers failed: ${read.code}`);
      return;
    }
    ctx.registeredBrokers = read.registered;
    const newcomers: BrokerId[] = [];
    const gone: BrokerId[] = [];
    for (const [id, b] of read.brokers) {
      const known = ctx.liveBrokers.get(id);
      if (known === undefined || known.epoch !== b.epoch) newcomers.push(id);
    }
    for (const [id, b] of ctx.liveBrokers) {
      const now = read.brokers.get(id);
      if (now === undefined || now.epoch !== b.epoch) gone.push(id);
    }
    if (newcomers.length === 0 && gone.length === 0) {
      // Same brokers, same epochs: a registration may have changed in place (endpoints, rack).
      const modified = [...read.brokers].filter(
        ([id, b]) => JSON.stringify(b.registration) !== JSON.stringify(ctx.liveBrokers.get(id)?.registration),
      );
      if (modified.length === 0) return;
      for (const [id, b] of modified) ctx.liveBrokers.set(id, b);
      this.logger.info(`broker registrations changed: [${modified.map(([id]) => id).join(',')}]`);
      this.sender.brokersChanged(registrations(ctx));
      this.sendUpdateMetadata([...ctx.liveBrokers.keys()], []);
      return;
    }
    // A broker registered under a new epoch while the controller still knew the old one crashed and came back
    // between two reads (Kafka's bounced broker, KIP-380): it lost its memory and maybe its unflushed bytes, so it
    // is first handled as dead (it leaves every ISR; what it led elects another leader) and then as a newcomer.
    const bounced = newcomers.filter((id) => ctx.liveBrokers.has(id));
    this.logger.info(
      `brokers changed: up [${newcomers.join(',')}], down [${gone.join(',')}]` +
        (bounced.length > 0 ? `, bounced [${bounced.join(',')}]` : ''),
    );
    ctx.liveBrokers.clear();
    for (const [id, b] of read.brokers) if (!bounced.includes(id)) ctx.liveBrokers.set(id, b);
    for (const id of [...gone, ...newcomers]) ctx.shuttingDown.delete(id);
    // A broker that registers again has reopened its log directories: its replicas are asked afresh.
    for (const id of [...gone, ...newcomers]) ctx.offlineReplicas.delete(id);

    const changed = await this.reconcile([...ctx.allPartitions()]);
    if (this.ctx !== ctx) return;
    if (bounced.length > 0) {
      for (const id of bounced) ctx.liveBrokers.set(id, read.brokers.get(id)!);
      const seen = new Set(changed.map((c) => partitionKey(c.tp)));
      for (const c of await this.reconcile([...ctx.allPartitions()])) {
        if (!seen.has(partitionKey(c.tp))) changed.push(c);
      }
      if (this.ctx !== ctx) return;
    }
    this.sender.brokersChanged(registrations(ctx));
    const all = [...ctx.allPartitions()].map(({ topic, partition }) => ({ topic, partition }));
    const newSet = new Set(newcomers);
    // Newcomers learn the whole cluster; the others learn the new broker list, what changed, and every partition
    // with a replica on a broker that came or went: its offline replicas changed even when its leadership did
    // not (a follower that had already left the ISR dies), as Kafka's replica state machine sends them.
    const moved = new Set([...gone, ...newcomers]);
    const touched = new Map(changed.map((c) => [partitionKey(c.tp), c.tp]));
    for (const { topic, partition, entry } of ctx.allPartitions()) {
      const tp = { topic, partition };
      if (ctx.isDeleting(topic) || touched.has(partitionKey(tp))) continue;
      if (replicasOf(entry).some((r) => moved.has(r))) touched.set(partitionKey(tp), tp);
    }
    this.sendUpdateMetadata(newcomers, all);
    this.sendUpdateMetadata(
      [...ctx.liveBrokers.keys()].filter((b) => !newSet.has(b)),
      [...touched.values()],
    );
    const created = new Set(changed.filter((c) => c.created).map((c) => partitionKey(c.tp)));
    for (const b of newcomers) this.sendLeaderAndIsr(b, ctx.partitionsOn(b), created);
    const byBroker = new Map<BrokerId, TopicPartition[]>();
    for (const { tp } of changed) {
      const entry = ctx.partition(tp);
      if (entry === undefined) continue;
      for (const r of replicasOf(entry)) {
        if (!ctx.liveBrokers.has(r) || newSet.has(r)) continue;
        const list = byBroker.get(r) ?? [];
        list.push(tp);
        byBroker.set(r, list);
      }
    }
    for (const [b, tps] of byBroker) this.sendLeaderAndIsr(b, tps, created);
    this.deletions.onBrokersStarted(newcomers);
    await this.deletions.processDeletions();
    if (this.ctx === ctx) await this.healer.onBrokersChanged(gone, newcomers);
  }

  private async onTopicsChanged(): Promise<void> {
    if (this.ctx === null) return;
    const names = await this.store.children(TOPICS_PATH, this.watchTopics);
    if (!names.ok || this.ctx === null) return;
    const ctx = this.ctx;
    const present = new Set(names.value);
    const added = names.value.filter((n) => !ctx.topics.has(n));
    const removed = [...ctx.topics.keys()].filter((n) => !present.has(n));
    const reads = await Promise.all(added.map((n) => this.readTopic(n, true)));
    if (this.ctx !== ctx) return;
    if (removed.length > 0) {
      // Removed without the controller's deletion (an operator deleted the node): brokers drop them.
      const tps = removed.flatMap((t) =>
        [...ctx.topics.get(t)!.partitions.keys()].map((p) => ({ topic: t, partition: p })),
      );
      this.sendUpdateMetadata([...ctx.liveBrokers.keys()], tps, new Set(removed));
      for (const t of removed) ctx.removeTopic(t);
    }
    const fresh: TopicPartition[] = [];
    for (const t of reads) {
      if (t === null || ctx.topics.has(t.name)) continue;
      this.putReadTopic(ctx, t);
      for (const p of t.partitions.keys()) fresh.push({ topic: t.name, partition: p });
    }
    await this.assignMissingTopicIds(reads);
    if (this.ctx !== ctx) return;
    const changed = await this.reconcile(fresh);
    this.propagate(changed);
    if (reads.some((t) => t !== null && ctx.deletions.has(t.name))) await this.deletions.processDeletions();
  }

  private async onPartitionsModified(name: string): Promise<void> {
    if (this.ctx === null || !this.ctx.topics.has(name)) return;
    const read = await this.readTopic(name, true);
    const ctx = this.ctx;
    if (read === null || ctx === null) return;
    const entry = ctx.topics.get(name);
    if (entry === undefined) return;
    const added: TopicPartition[] = [];
    for (const [p, { assignment, state }] of read.partitions) {
      const existing = entry.partitions.get(p);
      if (existing === undefined) {
        entry.partitions.set(p, entryOf(assignment, state));
        added.push({ topic: name, partition: p });
      } else if (!sameList(existing.assignment.replicas, assignment.replicas)) {
        this.logger.warn(`the replicas of ${name}-${p} changed outside a reassignment; ignoring the change`);
      }
    }
    if (added.length === 0) return;
    const changed = await this.reconcile(added);
    this.propagate(changed);
  }

  // ---- automatic preferred leader election ------------------------------------------------------------

  private cancelRebalance: (() => void) | null = null;

  private scheduleRebalance(): void {
    const settings = this.options.autoLeaderRebalance;
    if (settings == null || this.stopped) return;
    const schedule = settings.schedule ?? defaultSchedule;
    this.cancelRebalance = schedule(() => {
      this.queue.enqueue(
        'autoLeaderRebalance',
        async () => {
          await onCheckLeaderBalance(this.core);
          this.scheduleRebalance();
        },
        'autoLeaderRebalance',
      );
    }, settings.checkIntervalMs);
  }

  // ---- reassignment ---------------------------------------------------------------------------------------

  private sendStopReplica(
    brokers: readonly BrokerId[],
    tps: readonly TopicPartition[],
    deletePartitions: boolean,
  ): void {
    const ctx = this.ctx;
    if (ctx === null) return;
    for (const b of brokers) {
      if (!ctx.liveBrokers.has(b)) continue;
      this.sender.send(b, {
        kind: 'stopReplica',
        request: buildStopReplica(ctx, this.header, b, tps, deletePartitions),
      });
    }
  }

  /** Writes a partition's assignment and state in one guarded transaction and applies them. */
  private async writeAssignmentAndState(
    tp: TopicPartition,
    assignment: ReplicaAssignment,
    next: Leadership,
    expectedStateVersion: number,
  ): Promise<ApiError | null> {
    const ctx = this.ctx!;
    const retry = {
      errorCode: ErrorCode.REQUEST_TIMED_OUT,
      errorMessage: 'The partition changed meanwhile; retry.',
    };
    const node = await this.store.get(topicPath(tp.topic));
    if (!node.ok) return retry;
    const decoded = decodeTopicAssignment(node.value.data);
    if (!decoded.ok)
      return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: decoded.error.message };
    const partitions = new Map(decoded.value.partitions);
    partitions.set(tp.partition, assignment);
    const result = await this.fencedMulti([
      {
        op: 'set',
        path: partitionStatePath(tp.topic, tp.partition),
        data: encodePartitionState({ ...next, controllerEpoch: ctx.epoch }),
        version: expectedStateVersion,
      },
      {
        op: 'set',
        path: topicPath(tp.topic),
        data: encodeTopicAssignment({ topicId: decoded.value.topicId, partitions }),
        version: node.value.stat.version,
      },
    ]);
    if ('fenced' in result) {
      this.onFenced();
      return { errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'The controller moved.' };
    }
    if (!result.ok) {
      // The reply may have been lost after ZooKeeper committed the transaction (CONNECTIONLOSS), or the nodes
      // changed under this controller (BADVERSION). Either way the context follows ZooKeeper: both nodes are read
      // back (a read waits for the session to reconnect). A committed transaction that is exactly this one is this
      // call's own, since the controller makes one change at a time: it goes on as written, as Kafka's controller
      // does by retrying its ZooKeeper writes until connected (KafkaZkClient.retryRequestsUntilConnected), so its
      // new and removed replicas and its leader are told. Otherwise what was found is sent to the brokers, which
      // may never have learned it, and the caller is asked to retry.
      const found = await this.readBackPartition(tp);
      if (this.ctx !== ctx)
        return { errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'The controller moved.' };
      if (found === null) return retry;
      const committed =
        found.partitionEpoch === expectedStateVersion + 1 &&
        found.controllerEpoch === ctx.epoch &&
        sameLeadership(found.leadership, next) &&
        sameAssignment(found.assignment, assignment);
      if (committed) {
        this.logger.info(
          `the write of ${tp.topic}-${tp.partition}'s assignment lost its reply (${result.code}) but was committed`,
        );
        return null;
      }
      if (found.changed) this.propagate([{ tp, created: false }]);
      return retry;
    }
    const entry = ctx.partition(tp)!;
    const stateOp = result.value[1];
    entry.assignment = assignment;
    entry.leadership = next;
    entry.partitionEpoch = stateOp?.op === 'set' ? stateOp.stat.version : entry.partitionEpoch + 1;
    entry.controllerEpoch = ctx.epoch;
    return null;
  }
}

function stateOp(ctx: ControllerContext, w: StateWrite): Op {
  const data = encodePartitionState({ ...w.next, controllerEpoch: ctx.epoch });
  const path = partitionStatePath(w.tp.topic, w.tp.partition);
  return w.expectedVersion === -1
    ? { op: 'create', path, data, mode: 'persistent' }
    : { op: 'set', path, data, version: w.expectedVersion };
}

function sameAssignment(a: ReplicaAssignment, b: ReplicaAssignment): boolean {
  return (
    sameList(a.replicas, b.replicas) &&
    sameList(a.addingReplicas, b.addingReplicas) &&
    sameList(a.removingReplicas, b.removingReplicas)
  );
}

function sameLeadership(a: Leadership, b: Leadership): boolean {
  return (
    a.leader === b.leader &&
    a.leaderEpoch === b.leaderEpoch &&
    sameList(a.isr, b.isr) &&
    a.leaderRecoveryState === b.leaderRecoveryState
  );
}

function entryOf(assignment: ReplicaAssignment, state: StateRead | null): PartitionEntry {
  return {
    assignment,
    leadership: state?.leadership ?? null,
    partitionEpoch: state?.partitionEpoch ?? -1,
    controllerEpoch: state?.controllerEpoch ?? -1,
  };
}

function registrations(ctx: ControllerContext): Map<BrokerId, LiveBroker['registration']> {
  return new Map([...ctx.liveBrokers].map(([id, b]) => [id, b.registration]));
}

export type { TopicEntry };

/** The partitions a LeaderAndIsr answer refused with KAFKA_STORAGE_ERROR (grouped by topic id from v5). */
function storageErrorPartitions(ctx: ControllerContext, response: LeaderAndIsrResponse): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const p of response.partitionErrors) {
    if (p.errorCode === ErrorCode.KAFKA_STORAGE_ERROR)
      out.push({ topic: p.topicName, partition: p.partitionIndex as PartitionId });
  }
  for (const t of response.topics) {
    const topic = ctx.topicsById.get(t.topicId);
    if (topic === undefined) continue;
    for (const p of t.partitionErrors) {
      if (p.errorCode !== ErrorCode.KAFKA_STORAGE_ERROR) continue;
      if (!out.some((o) => o.topic === topic && o.partition === p.partitionIndex)) {
        out.push({ topic, partition: p.partitionIndex as PartitionId });
      }
    }
  }
  return out;
}
