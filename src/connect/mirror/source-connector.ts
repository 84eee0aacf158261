// MirrorSourceConnector (org.apache.kafka.connect.mirror.MirrorSourceConnector): copies the records of the
// topics a flow mirrors from the source cluster to remote topics on the target, partition for partition, with
// keys, values, headers and timestamps. The connector owns the topic side: it lists the source's topics every
// refresh.topics.interval.seconds, creates missing remote topics (same partition count and topic
// configs, as Kafka creates them) and partitions, syncs topic configs and ACLs on their intervals, creates the
// offset-syncs topic, and asks for new task configs when the set of partitions changes. Each task reads its
// `task.assigned.partitions` with a consumer that belongs to no group; its position is the Connect source
// offset {"offset": n} of partition {"cluster", "partition", "topic"}, stored by the runtime only once the
// records are acknowledged by the target (at least once, kill -9 included).

import { Admin, Consumer, Producer } from '../../client/index.js';
import { type Logger, silentLogger } from '../../common/logger.js';
import { ConfigDef } from '../api/config-def.js';
import { SourceConnector, type SourceOffsets, SourceTask, type TaskConfig } from '../api/connector.js';
import { type ConnectHeader, SourceRecord, type SourceRecordFields } from '../api/records.js';
import { Schemas } from '../data/schema.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { MIRROR_LOGGERS, mirrorLogger } from './log.js';
import { mirrorMetrics, type PartitionMetrics } from './metrics.js';
import { MIRROR_DEFAULTS, MirrorConfig, MirrorFilters } from './mirror-config.js';
import { SyncDecider } from './offset-syncs.js';
import { MIRROR_SOURCE_PARTITIONS, validateMirrorOffsets } from './offsets-validation.js';
import { encodeOffsetSyncKey, encodeOffsetSyncValue } from './records.js';
import { listSourcePartitions, type SourcePartitions, TopicSync } from './topic-sync.js';

export const ASSIGNED_PARTITIONS_KEY = 'task.assigned.partitions';
/** Sends of offset syncs in flight at once (Kafka's MAX_OUTSTANDING_OFFSET_SYNCS); each send is one batch. */
const OUTSTANDING_OFFSET_SYNCS_MAX = 10;
/**
 * Syncs waiting for a send. Kafka keeps one per partition and replaces it, so a burst of acknowledgements loses
 * syncs while ten sends are in flight and translation gets coarser than offset.lag.max; here the waiting syncs go
 * out together in the next batch, and only beyond this bound are the oldest dropped (any subset is still safe).
 */
const QUEUED_OFFSET_SYNCS_MAX = 10_000;

export function mirrorConfigDef(): ConfigDef {
  const def = new ConfigDef();
  for (const key of ['source.cluster.alias', 'target.cluster.alias']) {
    def.define({
      name: key,
      type: 'STRING',
      importance: 'HIGH',
      documentation: `Alias of the ${key.split('.')[0]} cluster`,
    });
  }
  for (const [name, value] of Object.entries(MIRROR_DEFAULTS)) {
    def.define({
      name,
      type: 'STRING',
      defaultValue: value,
      importance: 'MEDIUM',
      documentation: `MirrorMaker's ${name}`,
    });
  }
  return def;
}

/** Ensures an internal compacted topic with one partition (offset syncs, checkpoints, heartbeats). */
export async function ensureInternalTopic(
  admin: Admin,
  topic: string,
  replicationFactor: number,
  /** MirrorUtils's logger (mirrorLogger), as Kafka's createCompactedTopic logs the creation. */
  log: Logger,
): Promise<void> {
  if ((await admin.listTopics({ listInternal: true })).includes(topic)) return;
  const brokers = (await admin.describeCluster()).brokers.length;
  const rf = replicationFactor > brokers ? -1 : replicationFactor;
  const [r] = await admin.createTopics([
    { topic, numPartitions: 1, replicationFactor: rf, configs: { 'cleanup.policy': 'compact' } },
  ]);
  if (r?.error && r.error.code !== 36) throw r.error;
  log.info(`Created internal topic ${topic}`);
}

function tpText(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

export function parseAssigned(text: string | undefined): { topic: string; partition: number }[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const at = s.lastIndexOf('-');
      const partition = Number(s.slice(at + 1));
      if (at <= 0 || !Number.isInteger(partition) || partition < 0)
        throw new Error(`bad topic-partition ${s}`);
      return { topic: s.slice(0, at), partition };
    });
}

export class MirrorSourceConnector extends SourceConnector {
  static readonly className = 'org.apache.kafka.connect.mirror.MirrorSourceConnector';
  private props: Record<string, string> = {};
  private c: MirrorConfig | null = null;
  private source: Admin | null = null;
  private target: Admin | null = null;
  private sync: TopicSync | null = null;
  private known: SourcePartitions = { topics: new Map() };
  /** The refresh, config-sync and ACL-sync timers: each job repeats on its own interval, as Kafka schedules them. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  /**
   * KIP-875, as Kafka's: the source consumer commits no offsets of its own, so the runtime's are all there is and
   * they need only fit (offsets-validation.ts).
   */
  override alterOffsets(_props: Record<string, string>, offsets: SourceOffsets): boolean {
    return validateMirrorOffsets(offsets, MIRROR_SOURCE_PARTITIONS);
  }
  config(): ConfigDef {
    return mirrorConfigDef();
  }

  /** Set when the connector starts, with its flow. */
  private log: Logger = silentLogger;

  async start(props: Record<string, string>): Promise<void> {
    this.props = { ...props };
    const c = new MirrorConfig(props);
    this.c = c;
    const flow = `${c.sourceAlias}->${c.targetAlias}`;
    this.log = mirrorLogger(this.context, MIRROR_LOGGERS.sourceConnector, flow);
    // A pair MirrorMaker runs only for its heartbeats (enabled=false): no topics, syncs nor tasks, as Kafka's.
    if (!c.bool('enabled')) return;
    this.source = new Admin(
      c.clientOptions('source', `${c.sourceAlias}->${c.targetAlias}|source-admin`, 'admin'),
    );
    this.target = new Admin(
      c.clientOptions('target', `${c.sourceAlias}->${c.targetAlias}|target-admin`, 'admin'),
    );
    this.sync = new TopicSync(c, new MirrorFilters(c), this.source, this.target, this.log);
    const syncsAdmin = c.offsetSyncsSide === 'source' ? this.source : this.target;
    if (c.bool('emit.offset-syncs.enabled'))
      await ensureInternalTopic(
        syncsAdmin,
        c.offsetSyncsTopic,
        c.int('offset-syncs.topic.replication.factor'),
        mirrorLogger(this.context, MIRROR_LOGGERS.utils, flow),
      );
    await this.refresh(true);
    await this.syncConfigs();
    await this.syncAcls();
    this.repeat('refresh.topics', 'Refreshing topics', () => this.refresh(false));
    this.repeat('sync.topic.configs', 'Syncing topic configs', () => this.syncConfigs());
    this.repeat('sync.topic.acls', 'Syncing ACLs', () => this.syncAcls());
  }

  /**
   * Runs `job` every `<name>.interval.seconds` (or .interval.ms) while `<name>.enabled` is true, the next run
   * timed from the end of the previous one, so runs of one job never overlap; a negative interval turns it off.
   */
  private repeat(name: string, what: string, job: () => Promise<void>): void {
    const c = this.c!;
    const intervalMs = c.intervalMs(name);
    if (this.stopped || !c.bool(`${name}.enabled`) || intervalMs < 0) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      job()
        .catch((err) => this.log.error(`${what} failed: ${(err as Error).message}`))
        .finally(() => this.repeat(name, what, job));
    }, intervalMs);
    this.timers.add(timer);
  }

  /** Lists the source's partitions, creates remote topics and partitions, and asks for new tasks on a change. */
  private async refresh(initial: boolean): Promise<void> {
    const found = await listSourcePartitions(this.source!, new MirrorFilters(this.c!));
    await this.sync!.createTopicsAndPartitions(found);
    const changed =
      JSON.stringify([...found.topics].sort()) !== JSON.stringify([...this.known.topics].sort());
    this.known = found;
    if (changed && !initial && !this.stopped) {
      this.log.info(
        `Found ${[...found.topics.values()].reduce((a, b) => a + b, 0)} partitions; reconfiguring tasks`,
      );
      this.context.requestTaskReconfiguration();
    }
  }

  /** Copies the configs of the mirrored topics known from the last refresh (sync.topic.configs.enabled). */
  private async syncConfigs(): Promise<void> {
    const c = this.c!;
    if (!c.bool('sync.topic.configs.enabled') || c.intervalMs('sync.topic.configs') < 0) return;
    await this.sync!.syncTopicConfigs([...this.known.topics.keys()]);
  }

  /** Copies the ACLs of the mirrored topics (sync.topic.acls.enabled); a failure is logged, never fatal. */
  private async syncAcls(): Promise<void> {
    const c = this.c!;
    if (!c.bool('sync.topic.acls.enabled') || c.intervalMs('sync.topic.acls') < 0) return;
    await this.sync!.syncTopicAcls(new Set(this.known.topics.keys())).catch((err) =>
      this.log.warn(`Syncing ACLs failed: ${(err as Error).message}`),
    );
  }

  taskClass() {
    return MirrorSourceTask;
  }

  /**
   * KIP-618 as Kafka's MirrorSourceConnector answers it: exactly once only when the source consumer reads
   * read_committed, else records of transactions the source aborts would be copied as committed ones.
   */
  override exactlyOnceSupport(props: Record<string, string>): 'SUPPORTED' | 'UNSUPPORTED' {
    return new MirrorConfig(props).sourceReadCommitted ? 'SUPPORTED' : 'UNSUPPORTED';
  }

  /** Partitions spread round-robin over at most tasks.max tasks (none when there is nothing to mirror). */
  taskConfigs(maxTasks: number): TaskConfig[] {
    if (this.c === null || !this.c.bool('enabled')) return [];
    const tps: string[] = [];
    for (const [t, n] of [...this.known.topics].sort()) for (let p = 0; p < n; p++) tps.push(tpText(t, p));
    const count = Math.min(maxTasks, tps.length);
    const groups: string[][] = Array.from({ length: count }, () => []);
    for (const [i, tp] of tps.entries()) groups[i % count]!.push(tp);
    return groups.map((g) => ({ ...this.props, [ASSIGNED_PARTITIONS_KEY]: g.join(',') }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.source?.close();
    await this.target?.close();
  }
}

interface PartitionState {
  sourcePartition: { cluster: string; partition: number; topic: string };
  topic: string;
  partition: number;
  remoteTopic: string;
  metrics: PartitionMetrics;
  decider: SyncDecider;
  /** The newest sync not sent yet (held until the next offset commit); -1 when none is held. */
  heldUpstream: number;
  heldDownstream: number;
}

interface PendingSync {
  topic: string;
  partition: number;
  upstream: number;
  downstream: number;
}

/** Headers of a record that has none: one shared, empty, frozen array rather than one per record. */
const NO_HEADERS: readonly ConnectHeader[] = Object.freeze([]);

export class MirrorSourceTask extends SourceTask {
  private c: MirrorConfig | null = null;
  private consumer: Consumer | null = null;
  private syncProducer: Producer | null = null;
  /** Per source topic-partition: its Connect partition object (one per partition, reused), metrics and sync rule. */
  private readonly partitions = new Map<string, PartitionState>();
  /** The same states by their Connect partition object, which every record of the partition carries. */
  private readonly bySourcePartition = new Map<object, PartitionState>();
  /** Syncs to send now, in order; the held ones wait in their PartitionState until the next offset commit. */
  private pendingSyncs: PendingSync[] = [];
  /** The partition state of the last record committed (commitRecord's lookup, skipped while it stays the same). */
  private lastCommitted: PartitionState | null = null;
  /**
   * The clock for replication-latency-ms, read once per run of commitRecord() calls (one acknowledged batch, called
   * without a turn of the event loop between them) rather than once per record: Date.now() was ~85 ns a record.
   * -1 when it is to be read again; a microtask clears it once the run is over.
   */
  private commitNowMs = -1;
  private readonly forgetCommitClock = () => {
    this.commitNowMs = -1;
  };
  private outstandingSyncs = 0;
  private stopped = false;
  /** Set when the task starts, with its flow. */
  private log: Logger = silentLogger;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: TaskConfig): Promise<void> {
    const c = new MirrorConfig(props);
    this.c = c;
    const flow = `${c.sourceAlias}->${c.targetAlias}`;
    this.log = mirrorLogger(this.context, MIRROR_LOGGERS.sourceTask, flow);
    const assigned = parseAssigned(props[ASSIGNED_PARTITIONS_KEY]);
    this.consumer = new Consumer({
      ...c.clientOptions('source', `${flow}|MirrorSourceTask`, 'consumer'),
      autoOffsetReset: 'earliest',
      enableAutoCommit: false,
      isolationLevel: c.sourceReadCommitted ? 'read_committed' : 'read_uncommitted',
      maxPollRecords: 2000,
    });
    this.syncProducer = c.bool('emit.offset-syncs.enabled')
      ? new Producer({
          ...c.clientOptions(c.offsetSyncsSide, `${flow}|offset-syncs-producer`, 'producer'),
          acks: 'all',
        })
      : null;
    this.consumer.assign(assigned);
    const reader = this.context.offsetStorageReader();
    for (const tp of assigned) {
      const stored = reader.offset({ cluster: c.sourceAlias, partition: tp.partition, topic: tp.topic });
      const offset = stored?.offset;
      if (typeof offset === 'number' && offset >= 0) this.consumer.seek(tp, offset + 1);
    }
    this.log.info(`Mirroring ${assigned.length} partition(s)`);
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.stopped || this.consumer === null) return null;
    const c = this.c!;
    const records = await this.consumer.poll(c.int('consumer.poll.timeout.ms'));
    if (records.length === 0) return null;
    const out: SourceRecord[] = new Array(records.length);
    const now = Date.now();
    // A poll's records come partition by partition: look the state up only when the partition changes.
    let p: PartitionState | null = null;
    // One fields object for the poll, refilled per record: SourceRecord copies the fields out of it.
    const f: SourceRecordFields = {
      sourcePartition: null,
      sourceOffset: null,
      topic: '',
      kafkaPartition: 0,
      keySchema: Schemas.OPTIONAL_BYTES,
      key: null,
      valueSchema: Schemas.OPTIONAL_BYTES,
      value: null,
      timestamp: 0,
      headers: NO_HEADERS,
    };
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      if (p === null || p.partition !== r.partition || p.topic !== r.topic) {
        p = this.partitionState(r.topic, r.partition);
      }
      const bytes = (r.key?.length ?? 0) + (r.value?.length ?? 0);
      mirrorMetrics.recordPolled(p.metrics, bytes, r.timestamp, now);
      const headers = r.headers;
      f.sourcePartition = p.sourcePartition;
      f.sourceOffset = { offset: r.offset };
      f.topic = p.remoteTopic;
      f.kafkaPartition = r.partition;
      f.key = r.key;
      f.value = r.value;
      f.timestamp = r.timestamp;
      f.headers =
        headers.length === 0
          ? NO_HEADERS
          : headers.map((h) => ({ key: h.key, schema: Schemas.OPTIONAL_BYTES, value: h.value }));
      out[i] = new SourceRecord(f);
    }
    return out;
  }

  private partitionState(topic: string, partition: number): PartitionState {
    const key = tpText(topic, partition);
    let p = this.partitions.get(key);
    if (p === undefined) {
      const c = this.c!;
      const remoteTopic = c.policy.formatRemoteTopic(c.sourceAlias, topic);
      p = {
        sourcePartition: { cluster: c.sourceAlias, partition, topic },
        topic,
        partition,
        remoteTopic,
        metrics: mirrorMetrics.partition(c.targetAlias, remoteTopic, partition),
        decider: new SyncDecider(c.int('offset.lag.max')),
        heldUpstream: -1,
        heldDownstream: -1,
      };
      this.partitions.set(key, p);
      this.bySourcePartition.set(p.sourcePartition, p);
    }
    return p;
  }

  override commitRecord(
    record: SourceRecord,
    metadata: { topic: string; partition: number; offset: number } | null,
  ): void {
    const sp = record.sourcePartition;
    if (metadata === null || sp === null) return;
    // Records carry the partition object poll() gave them; a transform may have made another, equal one. A batch's
    // records come partition by partition, so the last one's state is usually the one.
    let p = this.lastCommitted;
    if (p === null || p.sourcePartition !== sp) {
      p = this.bySourcePartition.get(sp) ?? this.partitionState(sp.topic as string, sp.partition as number);
      this.lastCommitted = p;
    }
    const upstream = (record.sourceOffset as { offset: number }).offset;
    const now = this.commitClock();
    mirrorMetrics.recordCommitted(p.metrics, record.timestamp ?? now, now);
    if (this.syncProducer === null) return; // emit.offset-syncs.enabled=false
    if (p.decider.update(upstream, metadata.offset)) {
      p.heldUpstream = -1;
      this.queueSync({ topic: p.topic, partition: p.partition, upstream, downstream: metadata.offset });
      this.firePendingSyncs();
    } else {
      p.heldUpstream = upstream;
      p.heldDownstream = metadata.offset;
    }
  }

  private commitClock(): number {
    if (this.commitNowMs < 0) {
      this.commitNowMs = Date.now();
      queueMicrotask(this.forgetCommitClock);
    }
    return this.commitNowMs;
  }

  /** After the runtime stored offsets: the held syncs go out too, so checkpoints can be precise when idle. */
  override commit(): void {
    for (const p of this.partitions.values()) {
      if (p.heldUpstream < 0) continue;
      this.queueSync({
        topic: p.topic,
        partition: p.partition,
        upstream: p.heldUpstream,
        downstream: p.heldDownstream,
      });
      p.heldUpstream = -1;
    }
    this.firePendingSyncs();
  }

  private queueSync(sync: PendingSync): void {
    if (this.pendingSyncs.length >= QUEUED_OFFSET_SYNCS_MAX) this.pendingSyncs.shift();
    this.pendingSyncs.push(sync);
  }

  /** Sends every waiting sync as one batch, unless OUTSTANDING_OFFSET_SYNCS_MAX batches are in flight. */
  private firePendingSyncs(): void {
    const producer = this.syncProducer;
    if (producer === null || this.pendingSyncs.length === 0) return;
    if (this.outstandingSyncs >= OUTSTANDING_OFFSET_SYNCS_MAX) return;
    const topic = this.c!.offsetSyncsTopic;
    const syncs = this.pendingSyncs;
    this.pendingSyncs = [];
    this.outstandingSyncs++;
    producer
      .sendBatch(
        syncs.map((s) => ({
          topic,
          partition: 0,
          key: encodeOffsetSyncKey(s),
          value: encodeOffsetSyncValue({ upstreamOffset: s.upstream, downstreamOffset: s.downstream }),
        })),
      )
      .catch((err) => this.log.error(`Failure sending offset syncs: ${(err as Error).message}`))
      .finally(() => {
        this.outstandingSyncs--;
        this.firePendingSyncs();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.consumer?.close().catch(() => {});
    await this.syncProducer?.close().catch(() => {});
    this.consumer = null;
    this.syncProducer = null;
  }
}
