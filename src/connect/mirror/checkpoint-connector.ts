// MirrorCheckpointConnector (org.apache.kafka.connect.mirror.MirrorCheckpointConnector): every
// emit.checkpoints.interval.ms, each task reads the committed offsets of its consumer groups on the source,
// translates them through the offset syncs (offset-syncs.ts: at or before the true position) and writes
// Checkpoint records to `<source>.checkpoints.internal` on the target. With sync.group.offsets.enabled it also
// commits the translated offsets to the same groups on the target every sync.group.offsets.interval.ms, but only
// to groups with no active members there and only forwards (a consumer already further on the target is left
// alone), as Kafka does. The connector lists the source's groups every refresh.groups.interval.ms and spreads
// them over tasks as `task.assigned.groups`.

import { Admin, Consumer } from '../../client/index.js';
import type { ConfigDef } from '../api/config-def.js';
import { SourceConnector, SourceTask, type TaskConfig } from '../api/connector.js';
import { SourceRecord } from '../api/records.js';
import { Schemas } from '../data/schema.js';
import { InterruptibleSleep } from '../runtime/interruptible-sleep.js';
import { BROOK_CONNECT_VERSION } from '../version.js';
import { mirrorLog } from './log.js';
import { MirrorConfig, MirrorFilters } from './mirror-config.js';
import { OffsetSyncStore } from './offset-syncs.js';
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

  config(): ConfigDef {
    return mirrorConfigDef();
  }

  private log = (line: string): void =>
    mirrorLog(`${this.c?.sourceAlias}->${this.c?.targetAlias} MirrorCheckpointConnector`, line);

  async start(props: Record<string, string>): Promise<void> {
    this.props = { ...props };
    const c = new MirrorConfig(props);
    this.c = c;
    if (!c.bool('emit.checkpoints.enabled')) return;
    this.source = new Admin(c.clientOptions('source', `${c.sourceAlias}->${c.targetAlias}|checkpoint-admin`));
    const target = new Admin(
      c.clientOptions('target', `${c.sourceAlias}->${c.targetAlias}|checkpoint-admin`),
    );
    try {
      await ensureInternalTopic(
        target,
        c.checkpointsTopic,
        c.int('checkpoints.topic.replication.factor'),
        this.log,
      );
    } finally {
      await target.close();
    }
    this.groups = await this.listGroups();
    this.schedule();
  }

  private async listGroups(): Promise<string[]> {
    const filters = new MirrorFilters(this.c!);
    const all = await this.source!.listGroups();
    return all
      .filter((g) => g.protocolType === 'consumer' || g.protocolType === '')
      .map((g) => g.groupId)
      .filter((g) => filters.shouldReplicateGroup(g))
      .sort();
  }

  private schedule(): void {
    if (this.stopped || !this.c!.bool('refresh.groups.enabled')) return;
    this.timer = setTimeout(async () => {
      try {
        const groups = await this.listGroups();
        if (JSON.stringify(groups) !== JSON.stringify(this.groups) && !this.stopped) {
          this.groups = groups;
          this.log(`Found ${groups.length} consumer group(s); reconfiguring tasks`);
          this.context.requestTaskReconfiguration();
        }
      } catch (err) {
        this.log(`Refreshing groups failed: ${(err as Error).message}`);
      }
      this.schedule();
    }, this.c!.int('refresh.groups.interval.ms'));
  }

  taskClass() {
    return MirrorCheckpointTask;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    if (this.c === null || !this.c.bool('emit.checkpoints.enabled') || this.groups.length === 0) return [];
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
  private syncsConsumer: Consumer | null = null;
  private readonly store = new OffsetSyncStore();
  private readonly sleeper = new InterruptibleSleep();
  private syncsLoop: Promise<void> | null = null;
  private nextCheckpointMs = 0;
  private nextGroupSyncMs = 0;
  /** The newest checkpoint per group and remote partition (what is synced to target groups). */
  private readonly latest = new Map<string, Map<string, Checkpoint>>();
  private flow = '';

  version(): string {
    return BROOK_CONNECT_VERSION;
  }

  async start(props: TaskConfig): Promise<void> {
    const c = new MirrorConfig(props);
    this.c = c;
    this.flow = `${c.sourceAlias}->${c.targetAlias}`;
    this.groups = (props[ASSIGNED_GROUPS_KEY] ?? '').split(',').filter((g) => g !== '');
    this.source = new Admin(c.clientOptions('source', `${this.flow}|checkpoint-task`));
    this.target = new Admin(c.clientOptions('target', `${this.flow}|checkpoint-task`));
    this.syncsConsumer = new Consumer({
      ...c.clientOptions(c.offsetSyncsSide, `${this.flow}|offset-syncs-reader`),
      enableAutoCommit: false,
      autoOffsetReset: 'earliest',
    });
    const tp = { topic: c.offsetSyncsTopic, partition: 0 };
    this.syncsConsumer.assign([tp]);
    await this.syncsConsumer.seekToBeginning([tp]);
    const [end] = await this.syncsConsumer.endOffsets([tp]);
    // Read what exists before translating anything, so no checkpoint comes from a stale sync.
    while ((await this.syncsConsumer.position(tp)) < (end?.offset ?? 0)) await this.readSyncs();
    this.store.markReadToEnd();
    this.syncsLoop = (async () => {
      while (!this.sleeper.stopped) await this.readSyncs().catch(() => this.sleeper.sleep(1000));
    })();
  }

  private async readSyncs(): Promise<void> {
    for (const r of await this.syncsConsumer!.poll(500)) {
      if (r.key === null || r.value === null) continue;
      try {
        this.store.add(decodeOffsetSync(r.key, r.value));
      } catch (err) {
        mirrorLog(
          this.flow,
          `Skipping a malformed offset sync at offset ${r.offset}: ${(err as Error).message}`,
        );
      }
    }
  }

  async poll(): Promise<SourceRecord[] | null> {
    const c = this.c!;
    const now = Date.now();
    if (now >= this.nextGroupSyncMs && c.bool('sync.group.offsets.enabled')) {
      this.nextGroupSyncMs = now + c.int('sync.group.offsets.interval.ms');
      await this.syncGroupOffsets().catch((err) =>
        mirrorLog(this.flow, `Syncing group offsets failed: ${(err as Error).message}`),
      );
    }
    if (now < this.nextCheckpointMs) {
      await this.sleeper.sleep(Math.min(POLL_SLICE_MS, this.nextCheckpointMs - now));
      return null;
    }
    this.nextCheckpointMs = now + c.int('emit.checkpoints.interval.ms');
    const out: SourceRecord[] = [];
    for (const group of this.groups) {
      try {
        out.push(...(await this.checkpoints(group)));
      } catch (err) {
        mirrorLog(this.flow, `Checkpointing group ${group} failed: ${(err as Error).message}`);
      }
    }
    return out;
  }

  /** Checkpoints of one group that changed since the last ones emitted. */
  private async checkpoints(group: string): Promise<SourceRecord[]> {
    const c = this.c!;
    const filters = new MirrorFilters(c);
    const out: SourceRecord[] = [];
    let latest = this.latest.get(group);
    if (latest === undefined) this.latest.set(group, (latest = new Map()));
    for (const o of await this.source!.listConsumerGroupOffsets(group)) {
      if (o.offset < 0 || !filters.shouldReplicateTopic(o.topic)) continue;
      let translated = this.store.translate(o.topic, o.partition, o.offset);
      const remote = c.policy.formatRemoteTopic(c.sourceAlias, o.topic);
      const key = `${remote}-${o.partition}`;
      const prev = latest.get(key);
      // The store keeps fewer syncs for older offsets, so a later translation of a group that did not move
      // back may come out coarser. The previous checkpoint was at or before the true position of an offset at or
      // before this one, so it still is: keep it rather than move the group back (as Kafka's CheckpointStore).
      if (prev !== undefined && o.offset >= prev.upstreamOffset && (translated ?? -1) < prev.downstreamOffset)
        translated = prev.downstreamOffset;
      if (translated === null || translated < 0) continue;
      if (prev !== undefined && prev.upstreamOffset === o.offset && prev.downstreamOffset === translated)
        continue;
      const cp: Checkpoint = {
        group,
        topic: remote,
        partition: o.partition,
        upstreamOffset: o.offset,
        downstreamOffset: translated,
        metadata: o.metadata ?? '',
      };
      latest.set(key, cp);
      out.push(
        new SourceRecord({
          sourcePartition: { group, topic: remote, partition: o.partition },
          sourceOffset: { offset: 0 },
          topic: c.checkpointsTopic,
          kafkaPartition: 0,
          keySchema: Schemas.BYTES,
          key: encodeCheckpointKey(cp),
          valueSchema: Schemas.BYTES,
          value: encodeCheckpointValue(cp),
          timestamp: Date.now(),
        }),
      );
    }
    return out;
  }

  /** Commits translated offsets to target groups that have no active members, never moving one backwards. */
  private async syncGroupOffsets(): Promise<void> {
    const target = this.target!;
    for (const [group, checkpoints] of this.latest) {
      if (checkpoints.size === 0) continue;
      const [d] = await target.describeGroups([group]);
      if (d !== undefined && d.members.length > 0) continue;
      if (d !== undefined && d.state !== 'Empty' && d.state !== 'Dead' && d.state !== '') continue;
      const committed = new Map(
        (await target.listConsumerGroupOffsets(group)).map((o) => [`${o.topic}-${o.partition}`, o.offset]),
      );
      const existing = new Map<string, number>();
      for (const t of await target.describeTopics([
        ...new Set([...checkpoints.values()].map((cp) => cp.topic)),
      ]))
        if (t.error === null) existing.set(t.topic, t.partitions.length);
      const offsets: { topic: string; partition: number; offset: number }[] = [];
      for (const [key, cp] of checkpoints) {
        if ((existing.get(cp.topic) ?? 0) <= cp.partition) continue;
        const now = committed.get(key);
        if (now !== undefined && now >= cp.downstreamOffset) continue;
        offsets.push({ topic: cp.topic, partition: cp.partition, offset: cp.downstreamOffset });
      }
      if (offsets.length === 0) continue;
      const results = await target.alterConsumerGroupOffsets(group, offsets);
      const failed = results.filter((r) => r.error !== null);
      if (failed.length > 0) mirrorLog(this.flow, `Group ${group}: ${failed[0]!.error!.message}`);
    }
  }

  async stop(): Promise<void> {
    this.sleeper.stop();
    await this.syncsLoop?.catch(() => {});
    await this.syncsConsumer?.close().catch(() => {});
    await this.source?.close().catch(() => {});
    await this.target?.close().catch(() => {});
  }
}
