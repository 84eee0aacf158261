// The broker's metrics as one prom-client registry: the hot-path counters (topic-stats.ts, request-metrics.ts)
// exported at scrape time, and gauges computed at scrape time from the broker's state (replica manager,
// controller, logs, replica fetchers, group and transaction coordinators, network counters), with prom-client's
// process metrics. Names follow the Prometheus JMX exporter's rules for Kafka (example_configs/kafka-2_0_0.yml):
// kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions becomes
// kafka_server_replicamanager_underreplicatedpartitions, a ...PerSec meter's count becomes ..._total, and
// MBean keys (topic, partition, clientId, request) become labels. Consumer-group lag, which Kafka brokers do not
// export, takes the names of the widely used kafka_exporter (kafka_consumergroup_lag); what has no Kafka
// counterpart is named brook_*.
//
// Before the broker's services exist (log recovery, registration) the state gauges export nothing.

import { performance } from 'node:perf_hooks';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { MetadataCache } from '../broker/metadata/metadata-cache.js';
import type { Partition } from '../broker/replica/partition.js';
import type { ReplicaManager } from '../broker/replica/replica-manager.js';
import type { FramePool } from '../common/frame-pool.js';
import type { Controller } from '../controller/controller.js';
import type { GroupCoordinator } from '../coordinator/group/group-coordinator.js';
import type { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator.js';
import type { NetworkStats } from '../network/stats.js';
import { ErrorCode } from '../protocol/errors.js';
import { INLINE_READ_PAUSE_MS, INLINE_READ_SLOW_MS, type InlineReads } from '../storage/inline-reads.js';
import { ControllerEventMetrics } from './controller-events.js';
import { RequestMetrics } from './request-metrics.js';
import { BrokerTopicStats, type TopicCounters } from './topic-stats.js';

/** A follower partition's lag behind its leader, as its replica fetcher last saw it. */
export interface FollowerLag {
  readonly clientId: string;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/** What the scrape reads; given once the broker's services exist. */
export interface MetricsSources {
  readonly replicas: ReplicaManager;
  readonly metadata: MetadataCache;
  readonly controller: Controller;
  readonly groupCoordinator: GroupCoordinator;
  readonly transactionCoordinator: TransactionCoordinator;
  readonly networkStats: NetworkStats;
  /** The broker's pool of large frames (common/frame-pool.ts); null when the listeners have none. */
  readonly framePool: Pick<FramePool, 'stats' | 'idleByteCount'> | null;
  /** File reads of fetches run on the event loop, one per fetch at most (storage/inline-reads.ts). */
  readonly inlineReads: Pick<InlineReads, 'stats'>;
  /** ISR changes this broker made as leader (IsrShrinksPerSec, IsrExpandsPerSec). */
  readonly isrChanges: { readonly shrinks: number; readonly expands: number };
  followerLags(): Iterable<FollowerLag>;
}

type Labels = Record<string, string | number>;
type Fill = (set: (labels: Labels, value: number) => void, sources: MetricsSources) => void;

const TOPIC_COUNTERS: readonly [keyof TopicCounters, string, string][] = [
  ['messagesIn', 'messagesin', 'MessagesInPerSec: records appended by produce requests'],
  ['bytesIn', 'bytesin', 'BytesInPerSec: record-set bytes appended by produce requests'],
  ['bytesOut', 'bytesout', 'BytesOutPerSec: record bytes sent to consumers'],
  ['bytesRejected', 'bytesrejected', 'BytesRejectedPerSec: record-set bytes refused for their size'],
  [
    'failedProduceRequests',
    'failedproducerequests',
    'FailedProduceRequestsPerSec: partition appends that failed',
  ],
  ['failedFetchRequests', 'failedfetchrequests', 'FailedFetchRequestsPerSec: partition reads that failed'],
  ['totalProduceRequests', 'totalproducerequests', 'TotalProduceRequestsPerSec: partition appends tried'],
  ['totalFetchRequests', 'totalfetchrequests', 'TotalFetchRequestsPerSec: partition reads tried'],
];

/** The shortest stretch of time the idle gauges report on (see updateLoopIdle). */
const IDLE_WINDOW_MIN_MS = 1000;

const CLASSIC_GROUP_STATES = [
  'Stable',
  'PreparingRebalance',
  'CompletingRebalance',
  'Empty',
  'Dead',
] as const;
/** KIP-848 groups' states that Kafka's classic-state gauges have no name for: counted as completing a rebalance. */
const CONSUMER_GROUP_STATE_AS_CLASSIC: Readonly<Record<string, string>> = {
  Assigning: 'CompletingRebalance',
  Reconciling: 'CompletingRebalance',
};

export class BrokerMetrics {
  readonly registry = new Registry();
  readonly topicStats = new BrokerTopicStats();
  readonly requests = new RequestMetrics();
  private readonly controllerEvents: ControllerEventMetrics;
  private sources: MetricsSources | null = null;
  /** Event-loop utilization at the previous scrape: the idle gauges cover the time since. */
  private lastLoopUtilization = performance.eventLoopUtilization();
  private loopIdleFraction: number | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests.register(this.registry);
    this.registerTopicCounters();
    this.registerReplicaManager();
    this.registerController();
    this.controllerEvents = new ControllerEventMetrics(this.registry);
    this.registerIdle();
    this.registerLogs();
    this.registerFramePool();
    this.registerInlineReads();
    this.registerGroups();
    this.registerTransactions();
  }

  /** The broker's services exist: the state gauges read them from now on. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
    this.controllerEvents.attach(sources.controller);
  }

  /** The Prometheus text exposition of every metric. */
  async scrape(): Promise<string> {
    this.updateLoopIdle();
    const sources = this.sources;
    if (sources !== null) this.topicStats.retainTopics((t) => sources.metadata.topic(t) !== undefined);
    return this.registry.metrics();
  }

  /**
   * The idle gauges cover the time since the previous scrape, once that is IDLE_WINDOW_MIN_MS or more; scrapes
   * closer together (two scrapers, a person reloading) see the last such window rather than the few busy
   * milliseconds of scraping itself. The first window starts with the process.
   */
  private updateLoopIdle(): void {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.lastLoopUtilization);
    if (window.idle + window.active < IDLE_WINDOW_MIN_MS && this.loopIdleFraction !== null) return;
    this.loopIdleFraction = 1 - window.utilization;
    this.lastLoopUtilization = now;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private gauge(name: string, help: string, labelNames: readonly string[], fill: Fill): void {
    const metrics = this;
    this.registry.registerMetric(
      new Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers: [],
        collect() {
          this.reset();
          const sources = metrics.sources;
          if (sources === null) return;
          fill((labels, value) => this.set(labels, value), sources);
        },
      }),
    );
  }

  private counter(name: string, help: string, labelNames: readonly string[], fill: Fill): void {
    const metrics = this;
    this.registry.registerMetric(
      new Counter({
        name,
        help,
        labelNames: [...labelNames],
        registers: [],
        collect() {
          this.reset();
          const sources = metrics.sources;
          if (sources === null) return;
          fill((labels, value) => this.inc(labels, value), sources);
        },
      }),
    );
  }

  /** kafka.server:type=BrokerTopicMetrics: per topic (label topic) and across topics (no label). */
  private registerTopicCounters(): void {
    const stats = this.topicStats;
    for (const [field, name, help] of TOPIC_COUNTERS) {
      this.registry.registerMetric(
        new Counter({
          name: `kafka_server_brokertopicmetrics_${name}_total`,
          help,
          labelNames: ['topic'],
          registers: [],
          collect() {
            this.reset();
            this.inc(stats.all[field]);
            for (const [topic, counters] of stats.topics()) this.inc({ topic }, counters[field]);
          },
        }),
      );
    }
    this.registry.registerMetric(
      new Counter({
        name: 'kafka_server_brokertopicmetrics_replicationbytesout_total',
        help: 'ReplicationBytesOutPerSec: record bytes sent to followers',
        registers: [],
        collect() {
          this.reset();
          this.inc(stats.replicationBytesOut);
        },
      }),
    );
    this.gauge(
      'kafka_network_requestchannel_requestqueuesize',
      'RequestQueueSize: requests read and not answered, not counting those waiting for an event',
      [],
      (set, s) => set({}, s.networkStats.requestsInFlight),
    );
  }

  /** kafka.server:type=ReplicaManager and kafka.cluster:type=Partition. */
  private registerReplicaManager(): void {
    const leaders = (s: MetricsSources) => [...s.replicas.all()].filter((p) => p.isLeader);
    this.gauge(
      'kafka_server_replicamanager_partitioncount',
      'PartitionCount: replicas hosted',
      [],
      (set, s) => set({}, [...s.replicas.all()].length),
    );
    this.gauge('kafka_server_replicamanager_leadercount', 'LeaderCount: partitions led', [], (set, s) =>
      set({}, leaders(s).length),
    );
    this.gauge(
      'kafka_server_replicamanager_offlinereplicacount',
      'OfflineReplicaCount: replicas here whose log directory is offline (JBOD)',
      [],
      (set, s) => set({}, s.replicas.offlineCount),
    );
    this.gauge(
      'kafka_server_replicamanager_underreplicatedpartitions',
      'UnderReplicatedPartitions: partitions led here whose ISR is smaller than their replica set',
      [],
      (set, s) => set({}, leaders(s).filter((p) => p.isr.length < p.replicas.length).length),
    );
    this.gauge(
      'kafka_server_replicamanager_underminisrpartitioncount',
      'UnderMinIsrPartitionCount: partitions led here whose ISR is smaller than min.insync.replicas (capped at the replicas assigned)',
      [],
      // The capped minimum, as Kafka 3.7+'s isUnderMinIsr (KAFKA-15583): a one-replica topic under a minimum of 2
      // takes acks=all writes and is not reported as under min ISR.
      (set, s) => set({}, leaders(s).filter((p) => p.isr.length < p.effectiveMinIsr).length),
    );
    this.gauge(
      'kafka_server_replicamanager_atminisrpartitioncount',
      'AtMinIsrPartitionCount: partitions led here whose ISR is exactly min.insync.replicas (capped at the replicas assigned)',
      [],
      (set, s) => set({}, leaders(s).filter((p) => p.isr.length === p.effectiveMinIsr).length),
    );
    this.gauge(
      'kafka_cluster_partition_underreplicated',
      'UnderReplicated: 1 for a partition led here whose ISR is smaller than its replica set',
      ['topic', 'partition'],
      (set, s) => {
        for (const p of leaders(s))
          set({ topic: p.topic, partition: p.partition }, p.isr.length < p.replicas.length ? 1 : 0);
      },
    );
    this.counter(
      'kafka_server_replicamanager_isrshrinks_total',
      'IsrShrinksPerSec: ISR changes this broker made as leader that removed a follower',
      [],
      (inc, s) => inc({}, s.isrChanges.shrinks),
    );
    this.counter(
      'kafka_server_replicamanager_isrexpands_total',
      'IsrExpandsPerSec: ISR changes this broker made as leader that added a follower',
      [],
      (inc, s) => inc({}, s.isrChanges.expands),
    );
    this.gauge(
      'kafka_server_replicamanager_produceridcount',
      'ProducerIdCount: producer ids with state in the logs of the partitions hosted here',
      [],
      (set, s) => {
        let count = 0;
        for (const p of s.replicas.all()) count += p.log.producerState.producerCount;
        set({}, count);
      },
    );
    this.gauge(
      'kafka_server_fetcherlagmetrics_consumerlag',
      "ConsumerLag: a followed partition's leader high watermark minus this replica's log end offset",
      ['clientId', 'topic', 'partition'],
      (set, s) => {
        for (const l of s.followerLags())
          set({ clientId: l.clientId, topic: l.topic, partition: l.partition }, l.lag);
      },
    );
  }

  /** kafka.controller:type=KafkaController: 1 and the cluster's counts on the active controller, 0 elsewhere. */
  private registerController(): void {
    const context = (s: MetricsSources) => s.controller.context;
    this.gauge(
      'kafka_controller_kafkacontroller_activecontrollercount',
      'ActiveControllerCount: 1 on the broker running the active controller',
      [],
      (set, s) => set({}, s.controller.isActive ? 1 : 0),
    );
    this.gauge(
      'kafka_controller_kafkacontroller_offlinepartitionscount',
      'OfflinePartitionsCount: partitions without a live leader (active controller only)',
      [],
      (set, s) => {
        const ctx = context(s);
        let offline = 0;
        if (ctx !== null) {
          for (const { topic, entry } of ctx.allPartitions()) {
            if (ctx.isDeleting(topic)) continue;
            const leader = entry.leadership?.leader;
            if (leader === undefined || leader < 0 || !ctx.liveness.alive(leader)) offline++;
          }
        }
        set({}, offline);
      },
    );
    this.gauge(
      'kafka_controller_kafkacontroller_globaltopiccount',
      'GlobalTopicCount: topics in the cluster (active controller only)',
      [],
      (set, s) => set({}, context(s)?.topics.size ?? 0),
    );
    this.gauge(
      'kafka_controller_kafkacontroller_globalpartitioncount',
      'GlobalPartitionCount: partitions in the cluster (active controller only)',
      [],
      (set, s) => set({}, [...(context(s)?.allPartitions() ?? [])].length),
    );
    this.registerSelfHealing();
  }

  /** Self-healing on the active controller (Brook's own; Cruise Control reports the same as anomalies). */
  private registerSelfHealing(): void {
    const status = (s: MetricsSources) => s.controller.selfHealingStatus;
    this.gauge(
      'brook_controller_selfhealing_failedbrokers',
      'Brokers gone from the cluster whose replicas are not all moved yet, by state (waiting, healing, stuck)',
      ['state'],
      (set, s) => {
        const counts = new Map<string, number>([
          ['waiting', 0],
          ['healing', 0],
          ['stuck', 0],
        ]);
        for (const b of status(s).failedBrokers)
          if (counts.has(b.state)) counts.set(b.state, counts.get(b.state)! + 1);
        for (const [state, n] of counts) set({ state }, n);
      },
    );
    this.gauge(
      'brook_controller_selfhealing_partitions',
      'Partitions with a replica on a gone broker or an offline log directory, by state (offline, under-replicated) and the action taken (waiting for the timeout, moving, stuck, off, none); the controller logs each with its reason',
      ['state', 'action'],
      (set, s) => {
        const counts = new Map<string, number>();
        for (const state of ['offline', 'under-replicated'])
          for (const action of ['waiting', 'moving', 'stuck', 'off', 'none'])
            counts.set(`${state} ${action}`, 0);
        for (const p of status(s).partitions) {
          const k = `${p.state} ${p.action}`;
          counts.set(k, (counts.get(k) ?? 0) + 1);
        }
        for (const [k, n] of counts) {
          const [state, action] = k.split(' ');
          set({ state: state!, action: action! }, n);
        }
      },
    );
    this.gauge(
      'brook_controller_selfhealing_movingpartitions',
      'Partitions that self-healing is moving off failed brokers',
      [],
      (set, s) =>
        set(
          {},
          status(s).failedBrokers.reduce((n, b) => n + b.moving, 0),
        ),
    );
    this.gauge(
      'brook_controller_selfhealing_moves',
      'Partition moves of self-healing since this broker became controller, by outcome',
      ['outcome'],
      (set, s) => {
        const st = status(s);
        set({ outcome: 'started' }, st.movesStarted);
        set({ outcome: 'finished' }, st.movesFinished);
        set({ outcome: 'cancelled' }, st.movesCancelled);
        set({ outcome: 'topic_deleted' }, st.movesTopicDeleted);
        set({ outcome: 'replaced' }, st.movesReplaced);
        set({ outcome: 'operator_cancelled' }, st.movesOperatorCancelled);
      },
    );
    this.gauge(
      'brook_controller_selfhealing_pendingcancels',
      'Moves away from brokers that came back whose cancel is not written yet: every attempt failed and the controller tries again every 5 s (with a warning each time); the moves still run meanwhile',
      [],
      (set, s) => set({}, status(s).pendingCancels),
    );
  }

  /**
   * Network and request-handler idleness (NetworkProcessorAvgIdlePercent, RequestHandlerAvgIdlePercent: a
   * fraction from 0 to 1, named as the JMX exporter's Percent rule names them). One event loop does Brook's
   * network I/O and its request handling, so both are the loop's idle fraction between recent scrapes
   * (performance.eventLoopUtilization, see updateLoopIdle): near 0 means requests wait for the loop, as Kafka's
   * near-0 idle means they wait for its threads.
   */
  private registerIdle(): void {
    const metrics = this;
    for (const [name, help] of [
      [
        'kafka_network_socketserver_networkprocessoravgidle_percent',
        'NetworkProcessorAvgIdlePercent: fraction of time the event loop (network I/O) was idle between recent scrapes (1 s or more apart)',
      ],
      [
        'kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent',
        'RequestHandlerAvgIdlePercent: fraction of time the event loop (request handling) was idle between recent scrapes (1 s or more apart)',
      ],
    ] as const) {
      this.registry.registerMetric(
        new Gauge({
          name,
          help,
          registers: [],
          collect() {
            this.set(metrics.loopIdleFraction ?? 1);
          },
        }),
      );
    }
  }

  /** kafka.log:type=Log, per hosted partition. */
  private registerLogs(): void {
    const perLog = (name: string, help: string, value: (p: Partition) => number): void =>
      this.gauge(`kafka_log_log_${name}`, help, ['topic', 'partition'], (set, s) => {
        for (const p of s.replicas.all()) set({ topic: p.topic, partition: p.partition }, value(p));
      });
    perLog('size', 'Size: bytes of the partition log on disk', (p) => p.log.sizeInBytes);
    perLog('logstartoffset', 'LogStartOffset: first offset of the log', (p) => p.log.logStartOffset);
    perLog('logendoffset', 'LogEndOffset: next offset to be written', (p) => p.log.logEndOffset);
    perLog('numlogsegments', 'NumLogSegments: segments of the log', (p) => p.log.segmentCount);
    this.gauge(
      'brook_log_groupcommit_syncs',
      'Group-commit fdatasyncs of the partition log since it was opened (brook.log.flush.group.commit.enable)',
      ['topic', 'partition'],
      (set, s) => {
        for (const p of s.replicas.all())
          set({ topic: p.topic, partition: p.partition }, p.log.groupSyncCount);
      },
    );
  }

  /**
   * The frame pool (no Kafka counterpart): fresh buffers are external memory to V8, which answers enough of it
   * with full collections, so a rising allocated count under steady load is a cause of pauses to look for.
   */
  private registerFramePool(): void {
    const count = (name: keyof FramePool['stats'], help: string): void =>
      this.counter(`brook_network_framepool_${name}_total`, help, [], (inc, s) => {
        if (s.framePool !== null) inc({}, s.framePool.stats[name]);
      });
    count('allocated', 'Large frames (request frames, fetch reads) allocated because no idle buffer fitted');
    count('reused', 'Large frames taken from the idle buffers');
    count('recycled', 'Buffers that became idle again once nothing referred to them');
    count('dropped', 'Buffers left to the garbage collector: the idle buffers were at their bound');
    this.gauge(
      'brook_network_framepool_idle_bytes',
      'Memory of the idle buffers kept for reuse',
      [],
      (set, s) => {
        if (s.framePool !== null) set({}, s.framePool.idleByteCount);
      },
    );
  }

  /**
   * Inline file reads (no Kafka counterpart): a rising slow count means fetches read from the disk on the event
   * loop, each turning inline reads off for a second.
   */
  private registerInlineReads(): void {
    const count = (name: string, stat: keyof InlineReads['stats'], help: string): void =>
      this.counter(`brook_log_read_inline_${name}`, help, [], (inc, s) => inc({}, s.inlineReads.stats[stat]));
    count('total', 'reads', 'File reads of fetches done on the event loop (one per fetch at most)');
    count('bytes_total', 'bytes', 'Bytes of those reads');
    count(
      'slow_total',
      'slow',
      `Inline reads slower than ${INLINE_READ_SLOW_MS} ms (not from the page cache); each turns inline reads off ` +
        `for ${INLINE_READ_PAUSE_MS} ms`,
    );
  }

  /** kafka.coordinator.group:type=GroupMetadataManager, and committed offsets and lag per group partition. */
  private registerGroups(): void {
    const byState = (s: MetricsSources): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const g of s.groupCoordinator.list([], []).groups) {
        const state = CONSUMER_GROUP_STATE_AS_CLASSIC[g.groupState] ?? g.groupState;
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return counts;
    };
    this.gauge(
      'kafka_coordinator_group_groupmetadatamanager_numgroups',
      'NumGroups: groups coordinated by this broker',
      [],
      (set, s) => set({}, s.groupCoordinator.list([], []).groups.length),
    );
    for (const state of CLASSIC_GROUP_STATES) {
      this.gauge(
        `kafka_coordinator_group_groupmetadatamanager_numgroups${state.toLowerCase()}`,
        `NumGroups${state}: groups coordinated by this broker in state ${state}`,
        [],
        (set, s) => set({}, byState(s).get(state) ?? 0),
      );
    }
    const committed = (
      s: MetricsSources,
      visit: (group: string, topic: string, partition: number, offset: number) => void,
    ) => {
      for (const g of s.groupCoordinator.list([], []).groups) {
        const fetched = s.groupCoordinator.fetchOffsets(g.groupId, null, false);
        if (fetched.errorCode !== ErrorCode.NONE) continue;
        for (const t of fetched.topics)
          for (const p of t.partitions)
            if (p.errorCode === ErrorCode.NONE && p.committedOffset >= 0)
              visit(g.groupId, t.name, p.partitionIndex, p.committedOffset);
      }
    };
    this.gauge(
      'kafka_coordinator_group_groupmetadatamanager_numoffsets',
      'NumOffsets: committed offsets held by this broker',
      [],
      (set, s) => {
        let n = 0;
        committed(s, () => n++);
        set({}, n);
      },
    );
    this.gauge(
      'kafka_consumergroup_current_offset',
      'Committed offset of a consumer group partition (groups coordinated by this broker)',
      ['consumergroup', 'topic', 'partition'],
      (set, s) =>
        committed(s, (consumergroup, topic, partition, offset) =>
          set({ consumergroup, topic, partition }, offset),
        ),
    );
    this.gauge(
      'kafka_consumergroup_lag',
      'High watermark minus committed offset of a consumer group partition (groups coordinated here, partitions led here)',
      ['consumergroup', 'topic', 'partition'],
      (set, s) =>
        committed(s, (consumergroup, topic, partition, offset) => {
          const p = s.replicas.get(topic, partition);
          if (p === undefined || !p.isLeader) return;
          set({ consumergroup, topic, partition }, Math.max(0, p.log.highWatermark - offset));
        }),
    );
  }

  /** Transactional ids by state on this broker's transaction coordinator (no Kafka counterpart). */
  private registerTransactions(): void {
    this.gauge(
      'brook_transaction_coordinator_transactional_ids',
      'Transactional ids coordinated by this broker, by state (Ongoing, PrepareCommit, PrepareAbort are in flight)',
      ['state'],
      (set, s) => {
        const counts = new Map<string, number>();
        for (const t of s.transactionCoordinator.list([], []))
          counts.set(t.state, (counts.get(t.state) ?? 0) + 1);
        for (const [state, n] of counts) set({ state }, n);
      },
    );
  }
}
