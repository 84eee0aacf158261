// MirrorCheckpointConnector (org.apache.kafka.connect.mirror.MirrorCheckpointConnector): every
// emit.checkpoints.interval.seconds, each task reads the committed offsets of its consumer groups on the source,
// translates them through the offset syncs (offset-syncs.ts: at or before the true position) and writes
// Checkpoint records to `<source>.checkpoints.internal` on the target. With sync.group.offsets.enabled it also
// commits the translated offsets to the same groups on the target every sync.group.offsets.interval.seconds, but only
// to groups with no active members there and only forwards (a consumer already further on the target is left
// alone), as Kafka does. The connector lists the source's groups every refresh.groups.interval.seconds and spreads
// them over tasks as `task.assigned.groups`.

import { Admin } from '../../client/index.js';
import { type Logger, silentLogger } from '../../common/logger.js';
import type { ConfigDef, ConfigValue } from '../api/config-def.js';
import { SourceConnector, type SourceOffsets, SourceTask, type TaskConfig } from '../api/connector.js';
import { SourceRecord } from '../api/records.js';
import { Schemas } from '../data/schema.js';
import { KafkaBasedLog } from '../runtime/distributed/kafka-based-log.js';
import { InterruptibleSleep } from '../runtime/interruptible-sleep.js';
import { CONNECT_LOGGERS } from '../runtime/loggers.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { CheckpointStore, partitionKey } from './checkpoint-store.js';
import { MIRROR_LOGGERS, mirrorLogger } from './log.js';
import { MirrorConfig, MirrorFilters } from './mirror-config.js';
import { OffsetSyncStore } from './offset-syncs.js';
import { MIRROR_CHECKPOINT_PARTITIONS, validateMirrorOffsets } from './offsets-validation.js';
import { type Checkpoint, decodeOffsetSync, encodeCheckpointKey, encodeCheckpointValue } from './records.js';
import { ensureInternalTopic, mirrorConfigDef } from './source-connector.js';

export const ASSIGNED_GROUPS_KEY = 'task.assigned.groups';
const POLL_SLICE_MS = 1000;

export class MirrorCheckpointConnector extends SourceConnector {
  static readonly className = 'org.apache.kafka.connect.mirror.MirrorCheckpointConnector';
  private props: Record<string, string> = {};
  private c: MirrorConfig | null = null;
  private source: Admin | null = null;
  private groups: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  /** KIP-875, as Kafka's: the task never reads its offsets back, so they need only fit (offsets-validation.ts). */
  override alterOffsets(_props: Record<string, string>, offsets: SourceOffsets): boolean {
    return validateMirrorOffsets(offsets, MIRROR_CHECKPOINT_PARTITIONS);
  }
  config(): ConfigDef {
    return mirrorConfigDef();
  }

  /** Set when the connector starts, with its flow. */
  private log: Logger = silentLogger;

  /**
   * Kafka's MirrorCheckpointConfig.validate (KIP-1031): unless disabled (`enabled=false`, a pair run only for
   * heartbeats), the connector cannot run with emit.checkpoints.enabled or emit.offset-syncs.enabled set to
   * `false` (the exact text, as Kafka compares it).
   */
  override async validate(props: Record<string, string>): Promise<ConfigValue[]> {
    const values = await super.validate(props);
    if (props.enabled === 'false') return values;
    const refuse = (key: string, message: string) => {
      if (props[key] !== 'false') return;
      const v = values.find((x) => x.name === key);
      if (v !== undefined) v.errors.push(message);
      else
        values.push({
          name: key,
          value: props[key],
          recommendedValues: [],
          errors: [message],
          visible: true,
        });
    };
    refuse(
      'emit.checkpoints.enabled',
      "MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false",
    );
    refuse('emit.offset-syncs.enabled', "MirrorCheckpointConnector can't run without offset syncs");
    return values;
  }

  async start(props: Record<string, string>): Promise<void> {
    this.props = { ...props };
    const c = new MirrorConfig(props);
    this.c = c;
    const flow = `${c.sourceAlias}->${c.targetAlias}`;
    this.log = mirrorLogger(this.context, MIRROR_LOGGERS.checkpointConnector, flow);
    // A pair MirrorMaker runs only for its heartbeats (enabled=false): no checkpoints, as Kafka's.
    if (!c.bool('enabled') || !c.bool('emit.checkpoints.enabled')) return;
    this.source = new Admin(
      c.clientOptions('source', `${c.sourceAlias}->${c.targetAlias}|checkpoint-admin`, 'admin'),
    );
    const target = new Admin(
      c.clientOptions('target', `${c.sourceAlias}->${c.targetAlias}|checkpoint-admin`, 'admin'),
    );
    try {
      await ensureInternalTopic(
        target,
        c.checkpointsTopic,
        c.int('checkpoints.topic.replication.factor'),
        mirrorLogger(this.context, MIRROR_LOGGERS.utils, flow),
      );
    } finally {
      await target.close();
    }
    this.groups = await this.listGroups();
    this.log.info(`Started MirrorCheckpointConnector with ${this.groups.length} consumer groups.`);
    this.schedule();
  }

  /**
   * The groups to checkpoint, as Kafka's findConsumerGroups picks them: consumer groups that pass the group filter
   * and have a committed offset on at least one topic the topic filter lets through. A group that reads only
   * topics this flow does not mirror has nothing to translate, so it gets no task.
   */
  private async listGroups(): Promise<string[]> {
    const filters = new MirrorFilters(this.c!);
    const candidates = (await this.source!.listGroups())
      .filter((g) => g.protocolType === 'consumer' || g.protocolType === '')
      .map((g) => g.groupId)
      .filter((g) => filters.shouldReplicateGroup(g))
      .sort();
    const groups: string[] = [];
    for (const group of candidates) {
      const offsets = await this.source!.listConsumerGroupOffsets(group);
      if (offsets.some((o) => filters.byTopicFilter(o.topic))) groups.push(group);
    }
    const ignored = candidates.length - groups.length;
    if (ignored > 0)
      this.log.debug(`Ignoring ${ignored} group(s) without offsets for topics the filter accepts`);
    return groups;
  }

  private schedule(): void {
    if (this.stopped || !this.c!.bool('refresh.groups.enabled') || this.c!.intervalMs('refresh.groups') < 0)
      return;
    this.timer = setTimeout(async () => {
      try {
        const groups = await this.listGroups();
        if (JSON.stringify(groups) !== JSON.stringify(this.groups) && !this.stopped) {
          this.groups = groups;
          this.log.info(`Found ${groups.length} consumer group(s); reconfiguring tasks`);
          this.context.requestTaskReconfiguration();
        }
      } catch (err) {
        this.log.error(`Refreshing groups failed: ${(err as Error).message}`);
      }
      this.schedule();
    }, this.c!.intervalMs('refresh.groups'));
  }

  taskClass() {
    return MirrorCheckpointTask;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    if (this.c === null || !this.c.bool('enabled') || !this.c.bool('emit.checkpoints.enabled')) return [];
    if (this.groups.length === 0) return [];
    if (!this.c.bool('emit.offset-syncs.enabled')) return []; // nothing to translate through
    // A negative interval turns checkpoints off, as in Kafka.
    if (this.c.intervalMs('emit.checkpoints') < 0) return [];
    const count = Math.min(maxTasks, this.groups.length);
    const split: string[][] = Array.from({ length: count }, () => []);
    for (const [i, g] of this.groups.entries()) split[i % count]!.push(g);
    return split.map((g) => ({ ...this.props, [ASSIGNED_GROUPS_KEY]: g.join(',') }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.source?.close();
  }
}

export class MirrorCheckpointTask extends SourceTask {
  private c: MirrorConfig | null = null;
  private groups: string[] = [];
  private source: Admin | null = null;
  private target: Admin | null = null;
  private syncsLog: KafkaBasedLog | null = null;
  private store = new OffsetSyncStore();
  /** The checkpoints emitted so far, loaded from the checkpoints topic at start (what is synced to groups). */
  private checkpointStore = new CheckpointStore(new Set());
  private readonly sleeper = new InterruptibleSleep();
  private nextCheckpointMs = 0;
  private nextGroupSyncMs = 0;
  private flow = '';

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  /** Set when the task starts, with its flow. */
  private log: Logger = silentLogger;
  private readonly logger = (name: string): Logger => mirrorLogger(this.context, name, this.flow);

  async start(props: TaskConfig): Promise<void> {
    const c = new MirrorConfig(props);
    this.c = c;
    this.flow = `${c.sourceAlias}->${c.targetAlias}`;
    this.log = this.logger(MIRROR_LOGGERS.checkpointTask);
    this.groups = (props[ASSIGNED_GROUPS_KEY] ?? '').split(',').filter((g) => g !== '');
    this.source = new Admin(c.clientOptions('source', `${this.flow}|checkpoint-task`, 'admin'));
    this.target = new Admin(c.clientOptions('target', `${this.flow}|checkpoint-task`, 'admin'));
    // Checkpoints first: when they load, every offset sync may be kept (see OffsetSyncStore's constructor).
    this.checkpointStore = new CheckpointStore(new Set(this.groups));
    const loaded = await this.checkpointStore.load(
      c.checkpointsTopic,
      c.clientOptions('target', `${this.flow}|checkpoint-task`),
      c.int('checkpoints.topic.replication.factor'),
      this.logger,
    );
    this.store = new OffsetSyncStore(!loaded);
    const {
      bootstrapServers,
      clientId: _id,
      ...security
    } = c.clientOptions(c.offsetSyncsSide, `${this.flow}|offset-syncs-reader`, 'consumer');
    // Kafka's OffsetSyncStore: a KafkaBasedLog read to its end before anything is translated (so no checkpoint
    // comes from a stale sync), then followed.
    this.syncsLog = new KafkaBasedLog({
      topic: c.offsetSyncsTopic,
      bootstrapServers: Array.isArray(bootstrapServers) ? bootstrapServers.join(',') : bootstrapServers,
      clientId: `${this.flow}|offset-syncs-reader`,
      partitions: 1,
      replicationFactor: c.int('offset-syncs.topic.replication.factor'),
      clientOptions: security,
      log: this.logger(CONNECT_LOGGERS.kafkaBasedLog),
      onRecord: (r) => {
        if (r.key === null || r.value === null) return;
        try {
          this.store.add(decodeOffsetSync(r.key, r.value));
        } catch (err) {
          this.logger(MIRROR_LOGGERS.offsetSyncStore).warn(
            `Skipping a malformed offset sync at offset ${r.offset}: ${(err as Error).message}`,
          );
        }
      },
    });
    await this.syncsLog.start();
    this.store.markReadToEnd();
  }

  async poll(): Promise<SourceRecord[] | null> {
    const c = this.c!;
    const now = Date.now();
    if (now >= this.nextGroupSyncMs && c.bool('sync.group.offsets.enabled')) {
      this.nextGroupSyncMs = now + c.intervalMs('sync.group.offsets');
      await this.syncGroupOffsets().catch((err) =>
        this.log.error(`Syncing group offsets failed: ${(err as Error).message}`),
      );
    }
    if (now < this.nextCheckpointMs) {
      await this.sleeper.sleep(Math.min(POLL_SLICE_MS, this.nextCheckpointMs - now));
      return null;
    }
    this.nextCheckpointMs = now + c.intervalMs('emit.checkpoints');
    const out: SourceRecord[] = [];
    for (const group of this.groups) {
      try {
        out.push(...(await this.checkpoints(group)));
      } catch (err) {
        this.log.error(`Checkpointing group ${group} failed: ${(err as Error).message}`);
      }
    }
    return out;
  }

  /** The group's checkpoints that are more recent than the ones emitted before (Kafka's checkpointsForGroup). */
  private async checkpoints(group: string): Promise<SourceRecord[]> {
    const c = this.c!;
    const filters = new MirrorFilters(c);
    const fresh: Checkpoint[] = [];
    for (const o of await this.source!.listConsumerGroupOffsets(group)) {
      // Kafka's shouldCheckpointTopic: the topic filter alone. A heartbeats topic the source connector mirrors
      // only by heartbeats.replication.enabled is not checkpointed; topics without offset syncs translate to null.
      if (o.offset < 0 || !filters.byTopicFilter(o.topic)) continue;
      const translated = this.store.translate(o.topic, o.partition, o.offset);
      // No sync at or before the group's offset: it cannot be translated without risking a skipped record.
      if (translated === null || translated < 0) continue;
      const cp: Checkpoint = {
        group,
        topic: this.downstreamTopic(o.topic),
        partition: o.partition,
        upstreamOffset: o.offset,
        downstreamOffset: translated,
        metadata: o.metadata ?? '',
      };
      if (this.checkpointStore.isMoreRecent(cp)) fresh.push(cp);
    }
    this.checkpointStore.update(fresh);
    const timestamp = Date.now();
    return fresh.map(
      (cp) =>
        new SourceRecord({
          sourcePartition: { group, topic: cp.topic, partition: cp.partition },
          sourceOffset: { offset: 0 },
          topic: c.checkpointsTopic,
          kafkaPartition: 0,
          keySchema: Schemas.BYTES,
          key: encodeCheckpointKey(cp),
          valueSchema: Schemas.BYTES,
          value: encodeCheckpointValue(cp),
          timestamp,
        }),
    );
  }

  /**
   * The topic's name on the target (Kafka's renameTopicPartition): one that came from the target goes back to its
   * original name (`B.orders` -> `orders`), any other gets the source's prefix (`orders` -> `A.orders`).
   */
  private downstreamTopic(topic: string): string {
    const c = this.c!;
    if (c.policy.topicSource(topic) === c.targetAlias) return c.policy.originalTopic(topic);
    return c.policy.formatRemoteTopic(c.sourceAlias, topic);
  }

  /** Commits translated offsets to target groups that have no active members, never moving one backwards. */
  private async syncGroupOffsets(): Promise<void> {
    const target = this.target!;
    for (const [group, checkpoints] of this.checkpointStore.groupsWithCheckpoints()) {
      if (checkpoints.size === 0) continue;
      const [d] = await target.describeGroups([group]);
      if (d !== undefined && d.members.length > 0) continue;
      if (d !== undefined && d.state !== 'Empty' && d.state !== 'Dead' && d.state !== '') continue;
      const committed = new Map(
        (await target.listConsumerGroupOffsets(group)).map((o) => [
          partitionKey(o.topic, o.partition),
          o.offset,
        ]),
      );
      const existing = new Map<string, number>();
      for (const t of await target.describeTopics([
        ...new Set([...checkpoints.values()].map((cp) => cp.topic)),
      ]))
        if (t.error === null) existing.set(t.topic, t.partitions.length);
      const offsets: { topic: string; partition: number; offset: number; metadata: string }[] = [];
      for (const [key, cp] of checkpoints) {
        if ((existing.get(cp.topic) ?? 0) <= cp.partition) continue;
        const now = committed.get(key);
        if (now !== undefined && now >= cp.downstreamOffset) continue;
        // As Kafka's Checkpoint.offsetAndMetadata(): the translated offset with the source commit's metadata (no
        // leader epoch), so the target group reads back what the source group committed.
        offsets.push({
          topic: cp.topic,
          partition: cp.partition,
          offset: cp.downstreamOffset,
          metadata: cp.metadata,
        });
      }
      if (offsets.length === 0) continue;
      const results = await target.alterConsumerGroupOffsets(group, offsets);
      const failed = results.filter((r) => r.error !== null);
      if (failed.length > 0) this.log.error(`Group ${group}: ${failed[0]!.error!.message}`);
    }
  }

  async stop(): Promise<void> {
    this.sleeper.stop();
    await this.syncsLog?.stop().catch(() => {});
    await this.source?.close().catch(() => {});
    await this.target?.close().catch(() => {});
  }
}
