// Standby tasks of one KafkaStreams instance (num.standby.replicas): copies of other instances' task state kept
// up to date by reading the changelogs, with no processing, so that a failover restores only the tail.
//
// Owned by the instance, not by a thread (as Kafka's state updater): each stream thread tells it the standby
// tasks its assignment lists (setFor), and releases a task before running it as active (release), so that one
// task's state directory is never open twice. A standby keeps the persistent stores of its task (the engines
// under `<state.dir>/<application.id>/<task id>`, as the active task would open them) and writes their
// checkpoint every commit.interval.ms and when released or closed; the active task then restores from that
// checkpoint on. In-memory stores are kept too: release() hands their engines, with the last changelog offset
// each holds, to the thread that opens the task as active, which uses them as its stores and restores only
// what follows that offset (the state lives in this process, so it is handed over, not written down).
//
// One consumer (no group) reads every standby changelog partition, from the checkpoint or the beginning.
//
// A store restored from its source topic (reuse.ktable.source.topics) is kept from that topic's partition, as
// Kafka's StoreChangelogReader keeps such a standby: only the records before the group's committed offset are
// applied (the active task may not have processed the others yet, and may never, under exactly-once). A partition
// that reaches that limit is paused at it; the committed offsets are read again (an admin client, requireStable)
// every commit.interval.ms while one waits, and at once for a partition without a limit yet.
//
// Interactive queries with stale stores enabled (Kafka's StoreQueryParameters.enableStaleStores) read a standby's
// stores through storesNamed(): the typed layers of the active task's stores over the same engines, without a
// changelog, built per query (cheap objects), so a query sees what the standby has applied so far.

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Admin } from '../../client/admin.js';
import { Consumer, type ConsumerRecord } from '../../client/consumer.js';
import { KafkaProtocolError } from '../../client/errors.js';
import type { TopicPartition } from '../../client/requests.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { ResolvedConfig } from '../config.js';
import type { Serde } from '../serdes.js';
import { type BytesKeyValueStore, wipeCorruptedState } from '../state/bytes-store.js';
import { SessionStore } from '../state/session-store.js';
import { PlainKeyValueStore, restoreInto, TimestampedStore } from '../state/store-stack.js';
import type { StateStore } from '../state/stores.js';
import { TimestampedWindowStore } from '../state/window-store.js';
import type { Topology } from '../topology.js';
import { checkpointPath, readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { openEngine } from './engines.js';
import { changelogTopicName } from './internal-topics.js';
import { partitionKey, topicPartitionOfKey } from './partition-key.js';

const POLL_TIMEOUT_MS = 100;

interface StandbyStore {
  name: string;
  /** Its changelog, or the source topic it is restored from (`fromSource`). */
  changelog: string;
  fromSource: boolean;
  persistent: boolean;
  engine: BytesKeyValueStore;
  timestamped: boolean;
}

interface StandbyTask {
  id: string;
  partition: number;
  dir: string;
  stores: StandbyStore[];
  /** "changelog:partition" -> last offset applied. */
  offsets: Map<string, number>;
}

/** An in-memory store a released standby hands to the active task: its engine and the last offset it holds. */
export interface HandedStore {
  engine: BytesKeyValueStore;
  /** "changelog:partition" of the store. */
  changelogPartition: string;
  offset: number | undefined;
}

export class StandbyUpdater {
  private readonly wanted = new Map<string, Set<string>>();
  /** Thread -> tasks its newest assignment makes active there (their standbys wait for release()). */
  private readonly becomingActive = new Map<string, Set<string>>();
  private readonly tasks = new Map<string, StandbyTask>();
  private consumer: Consumer | null = null;
  private running = true;
  private loop: Promise<void> | null = null;
  private lastCheckpointMs = Date.now();
  /** Changelog partitions assigned without an offset to start from: read from their first offset. */
  private readonly unpositioned = new Map<string, TopicPartition>();
  /** Source topic partitions of stores restored from them -> the group's committed offset: records below apply. */
  private readonly limits = new Map<string, number>();
  /** Source topic partitions paused at their limit -> the offset they wait at. */
  private readonly atLimit = new Map<string, number>();
  private lastLimitsMs = 0;
  private admin: Admin | null = null;
  /** Changelog records applied to standby stores since start (for tests and metrics). */
  applied = 0;

  constructor(
    private readonly config: ResolvedConfig,
    private readonly topology: Topology,
    private readonly log: (message: string) => void,
  ) {}

  /** Ids of the standby tasks open now. */
  taskIds(): string[] {
    return [...this.tasks.keys()].sort();
  }

  /**
   * The standby tasks a thread's newest assignment lists; the instance's standbys are the union. `active`: the
   * tasks the assignment makes active on that thread; an open standby of one stays open until the thread
   * releases it, so that its in-memory stores can be handed over instead of dropped.
   */
  setFor(thread: string, ids: string[], active: string[] = []): void {
    this.wanted.set(thread, new Set(ids));
    this.becomingActive.set(thread, new Set(active));
    this.reconcile();
  }

  /**
   * Closes the task's standby before the caller opens it as an active task: persistent stores closed with their
   * checkpoint written, in-memory stores handed over (store name -> engine and offset), no longer read here.
   */
  release(id: string): Map<string, HandedStore> {
    for (const set of this.wanted.values()) set.delete(id);
    for (const set of this.becomingActive.values()) set.delete(id);
    const handed = new Map<string, HandedStore>();
    const task = this.tasks.get(id);
    if (task !== undefined) {
      this.tasks.delete(id);
      this.checkpoint(task);
      for (const s of task.stores) {
        const changelogPartition = partitionKey({ topic: s.changelog, partition: task.partition });
        if (s.persistent) s.engine.close();
        else
          handed.set(s.name, {
            engine: s.engine,
            changelogPartition,
            offset: task.offsets.get(changelogPartition),
          });
      }
      this.log(`standby task ${id} released (${handed.size} in-memory stores handed over)`);
      if (this.running) this.reassign();
    }
    this.reconcile();
    return handed;
  }

  /**
   * Read-only views of the standby instances of a store, one per standby task holding it (for stale queries).
   * Key-value, window and session stores; a join's duplicates window store is not queryable, as in Kafka.
   */
  storesNamed(name: string): { partition: number; store: StateStore }[] {
    const builder = this.topology.stores.get(name);
    if (builder === undefined || builder.window?.retainDuplicates) return [];
    const out: { partition: number; store: StateStore }[] = [];
    for (const task of this.tasks.values()) {
      const s = task.stores.find((x) => x.name === name);
      if (s === undefined) continue;
      const wrapped = builder.serdesFrom?.(this.config.defaultKeySerde, this.config.defaultValueSerde);
      const options = {
        name,
        engine: s.engine,
        changelog: null,
        serdeTopic: s.changelog,
        keySerde: wrapped?.key ?? ((builder.keySerde ?? this.config.defaultKeySerde) as Serde<unknown>),
        valueSerde:
          wrapped?.value ?? ((builder.valueSerde ?? this.config.defaultValueSerde) as Serde<unknown>),
        recordTimestamp: () => -1,
      };
      const store =
        builder.session !== null
          ? new SessionStore(options)
          : builder.window !== null
            ? new TimestampedWindowStore({ ...options, windowSizeMs: builder.window.sizeMs })
            : builder.timestamped
              ? new TimestampedStore(options)
              : new PlainKeyValueStore(options);
      out.push({ partition: task.partition, store });
    }
    return out;
  }

  /**
   * Task id -> the sum of the changelog offsets its standby stores hold now (in-memory ones included), for the
   * streams assignor's task offset sums: a caught-up in-memory standby counts as caught up as a persistent one
   * (whose checkpoint gives the same sum: the last offset held per changelog partition).
   */
  offsetSums(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, t] of this.tasks)
      if (t.offsets.size > 0)
        out.set(
          id,
          [...t.offsets.values()].reduce((n, o) => n + o, 0),
        );
    return out;
  }

  private reconcile(): void {
    if (!this.running) return;
    const union = new Set([...this.wanted.values()].flatMap((s) => [...s]));
    const held = new Set([...this.becomingActive.values()].flatMap((s) => [...s]));
    let changed = false;
    for (const [id, task] of this.tasks) {
      if (union.has(id) || held.has(id)) continue;
      this.closeTask(task);
      this.tasks.delete(id);
      changed = true;
    }
    for (const id of union) {
      if (this.tasks.has(id)) continue;
      const task = this.openTask(id);
      if (task === null) continue;
      this.tasks.set(id, task);
      changed = true;
    }
    if (changed) this.reassign();
  }

  private openTask(id: string): StandbyTask | null {
    const [st, partition] = id.split('_').map(Number) as [number, number];
    const subtopology = this.topology.subtopologies()[st];
    if (subtopology === undefined) return null;
    const dir = join(this.config.stateDir, this.config.applicationId, id);
    if (
      this.config.processingGuarantee === 'exactly_once_v2' &&
      existsSync(dir) &&
      !existsSync(checkpointPath(dir))
    ) {
      // The active task's rule under EOS: state without a checkpoint may hold writes of an aborted transaction
      // (this instance ran the task and crashed); rebuilt from the changelog, read_committed.
      this.log(`no checkpoint for standby task ${id} under EOS: wiping its state`);
      rmSync(dir, { recursive: true, force: true });
    }
    const checkpoint = readCheckpoint(dir);
    const task: StandbyTask = { id, partition, dir, stores: [], offsets: new Map() };
    for (const name of subtopology.stores) {
      const builder = this.topology.stores.get(name)!;
      const source = this.topology.sourceChangelogs.get(name);
      // A suppress buffer restores through its own format, in the active task only.
      if (source === undefined && (!builder.loggingEnabled || builder.suppressBuffer)) continue;
      mkdirSync(dir, { recursive: true });
      const engine = openEngine(builder, dir);
      const changelog = source ?? changelogTopicName(this.config.applicationId, name);
      const key = partitionKey({ topic: changelog, partition });
      const saved = engine.reopened ? checkpoint.get(key) : undefined;
      if (saved !== undefined) task.offsets.set(key, saved);
      task.stores.push({
        name,
        changelog,
        fromSource: source !== undefined,
        persistent: engine.persistent,
        engine,
        timestamped: builder.timestamped,
      });
    }
    if (task.stores.length === 0) return null;
    this.log(`standby task ${id} opened`);
    return task;
  }

  private closeTask(task: StandbyTask): void {
    this.checkpoint(task);
    for (const s of task.stores) s.engine.close();
    this.log(`standby task ${task.id} closed`);
  }

  /**
   * Only persistent stores' offsets: an in-memory store's state is gone with the process. `evenEmpty`: written
   * even without offsets, so that a wiped store's older offset does not stay in the file.
   */
  private checkpoint(task: StandbyTask, evenEmpty = false): void {
    const offsets = new Map<string, number>();
    for (const s of task.stores) {
      if (!s.persistent) continue;
      s.engine.flush();
      const key = partitionKey({ topic: s.changelog, partition: task.partition });
      const at = task.offsets.get(key);
      if (at !== undefined) offsets.set(key, at);
    }
    if (offsets.size > 0 || evenEmpty) writeCheckpoint(task.dir, offsets);
  }

  /**
   * Points the consumer at every open standby's changelog partitions, each from where its store is. A partition
   * whose store has no offset yet is assigned only once positionNew() has found its first offset: called while
   * run() polls, an assigned partition without a position would fail that poll (auto.offset.reset "none").
   */
  private reassign(): void {
    const wanted = new Map<string, { tp: TopicPartition; at: number | undefined }>();
    for (const t of this.tasks.values())
      for (const s of t.stores) {
        const tp = { topic: s.changelog, partition: t.partition };
        wanted.set(partitionKey(tp), { tp, at: t.offsets.get(partitionKey(tp)) });
      }
    for (const key of this.unpositioned.keys()) if (!wanted.has(key)) this.unpositioned.delete(key);
    for (const key of this.limits.keys()) if (!wanted.has(key)) this.limits.delete(key);
    for (const key of this.atLimit.keys()) if (!wanted.has(key)) this.atLimit.delete(key);
    if (this.consumer === null) {
      if (wanted.size === 0) return;
      this.consumer = new Consumer({
        // Kafka's standby tasks read their changelogs with the restore consumer: its settings.
        ...this.config.clients.restoreConsumer,
        bootstrapServers: this.config.bootstrapServers,
        clientId: `${this.config.clientId}-standby-consumer`,
        // As Kafka's restore consumer (getRestoreConsumerConfigs): a position out of range is a corrupted standby
        // (run(), below), never a silent jump to the first offset over the store's older contents.
        autoOffsetReset: 'none',
      });
      this.loop = this.run().catch((e: unknown) =>
        this.log(`standby updater failed: ${(e as Error).message}`),
      );
    }
    const before = new Set(this.consumer.assignment().map(partitionKey));
    const assigned: TopicPartition[] = [];
    const seeks: [TopicPartition, number][] = [];
    for (const [key, { tp, at }] of wanted) {
      if (before.has(key)) assigned.push(tp);
      else if (this.unpositioned.has(key)) continue;
      else if (at === undefined) this.unpositioned.set(key, tp);
      else {
        assigned.push(tp);
        seeks.push([tp, at + 1]);
      }
    }
    this.consumer.assign(assigned);
    for (const [tp, offset] of seeks) this.consumer.seek(tp, offset);
  }

  private async run(): Promise<void> {
    while (this.running) {
      const consumer = this.consumer!;
      if (!(await this.positionNew(consumer)) || consumer.assignment().length === 0) {
        await new Promise((r) => setTimeout(r, POLL_TIMEOUT_MS));
        continue;
      }
      await this.raiseLimits(consumer);
      let records: ConsumerRecord[];
      try {
        records = await consumer.poll(POLL_TIMEOUT_MS);
      } catch (err) {
        if (!(err instanceof KafkaProtocolError) || err.code !== ErrorCode.OFFSET_OUT_OF_RANGE) throw err;
        await this.rebuildTruncated(consumer, err);
        continue;
      }
      for (const r of records) {
        if (r.key === null) continue;
        const task = this.tasks.get(`${this.taskOfChangelog(r.topic)}_${r.partition}`);
        const store = task?.stores.find((s) => s.changelog === r.topic);
        // Released meanwhile: the active task restores this record itself.
        if (task === undefined || store === undefined) continue;
        const key = partitionKey(r);
        if (store.fromSource && r.offset >= (this.limits.get(key) ?? 0)) {
          // Past what the active task has committed: wait here (the batch's later records of the partition too).
          if (!this.atLimit.has(key)) {
            const tp = { topic: r.topic, partition: r.partition };
            consumer.pause([tp]);
            consumer.seek(tp, r.offset);
            this.atLimit.set(key, r.offset);
          }
          continue;
        }
        restoreInto(store.engine, store.timestamped, r.key, r.value, r.timestamp);
        task.offsets.set(key, r.offset);
        this.applied++;
      }
      if (Date.now() - this.lastCheckpointMs >= this.config.commitIntervalMs) {
        for (const t of this.tasks.values()) this.checkpoint(t);
        this.lastCheckpointMs = Date.now();
      }
    }
  }

  /**
   * Reads the group's committed offsets of the source topic partitions paused at their limit, when one has no limit
   * yet or commit.interval.ms passed since the last read (Kafka's updateOffsetIntervalMs), and resumes those whose
   * limit moved past where they wait. No committed offset: 0, nothing applies (Kafka's default). A failed read is
   * tried again on a later turn.
   */
  private async raiseLimits(consumer: Consumer): Promise<void> {
    if (this.atLimit.size === 0) return;
    const unknown = [...this.atLimit.keys()].some((key) => !this.limits.has(key));
    if (!unknown && Date.now() - this.lastLimitsMs < this.config.commitIntervalMs) return;
    this.lastLimitsMs = Date.now();
    const tps = [...this.atLimit.keys()].map(topicPartitionOfKey);
    this.admin ??= new Admin({
      ...this.config.clients.admin,
      bootstrapServers: this.config.bootstrapServers,
      clientId: `${this.config.clientId}-standby-admin`,
    });
    let committed: Map<string, number>;
    try {
      const offsets = await this.admin.listConsumerGroupOffsets(this.config.applicationId, tps, {
        requireStable: true,
      });
      committed = new Map(offsets.map((o) => [partitionKey(o), o.offset]));
    } catch (e) {
      this.log(`standby updater: reading the committed offsets failed, retrying: ${(e as Error).message}`);
      for (const tp of tps) if (!this.limits.has(partitionKey(tp))) this.limits.set(partitionKey(tp), 0);
      return;
    }
    const resumed: TopicPartition[] = [];
    for (const tp of tps) {
      const key = partitionKey(tp);
      const limit = Math.max(this.limits.get(key) ?? 0, committed.get(key) ?? 0);
      this.limits.set(key, limit);
      const waitingAt = this.atLimit.get(key);
      // Released or closed meanwhile: the map no longer has it.
      if (waitingAt === undefined || limit <= waitingAt) continue;
      this.atLimit.delete(key);
      resumed.push(tp);
    }
    if (resumed.length > 0) consumer.resume(resumed);
  }

  /**
   * Assigns the partitions of stores without an offset, each at its first offset (looked up first, so that no poll
   * sees them without a position). False when the lookup failed (tried again on the next turn).
   */
  private async positionNew(consumer: Consumer): Promise<boolean> {
    if (this.unpositioned.size === 0) return true;
    const entries = [...this.unpositioned];
    let starts: { topic: string; partition: number; offset: number }[];
    try {
      starts = await consumer.beginningOffsets(entries.map(([, tp]) => tp));
    } catch (e) {
      this.log(`standby updater: finding the first offsets failed, retrying: ${(e as Error).message}`);
      return false;
    }
    const startOf = new Map(starts.map((o) => [partitionKey(o), o.offset]));
    const added: [TopicPartition, number][] = [];
    for (const [key, tp] of entries) {
      const start = startOf.get(key);
      // Closed or released meanwhile (or opened again: the next turn looks that one up).
      if (this.unpositioned.get(key) !== tp || start === undefined || start < 0) continue;
      this.unpositioned.delete(key);
      added.push([tp, start]);
    }
    if (added.length === 0) return true;
    consumer.assign([...consumer.assignment(), ...added.map(([tp]) => tp)]);
    for (const [tp, start] of added) consumer.seek(tp, start);
    return true;
  }

  /**
   * The consumer's position in some standby changelog partitions fell before their first offset (records deleted
   * by DeleteRecords or retention after the standby's checkpoint or last read). Kafka's StoreChangelogReader marks
   * such standbys corrupted, and the state updater then marks all the changelogs of each such task corrupted, not
   * only the truncated one: their offsets are dropped and the task is closed dirty, its state wiped only under
   * exactly-once (StateManagerUtil.closeStateManager). Here every store of such a task forgets its offset (the
   * checkpoint written without them) and is read again from its partition's first offset: over its contents under
   * at_least_once, emptied first under EOS or when in memory (Kafka's dirty close loses it). Any other out-of-range
   * answer fails the updater.
   */
  private async rebuildTruncated(consumer: Consumer, error: KafkaProtocolError): Promise<void> {
    const starts = new Map<string, number>();
    for (const o of await consumer.beginningOffsets(consumer.assignment()))
      starts.set(partitionKey(o), o.offset);
    const corrupted = new Set<StandbyTask>();
    let behind = 0;
    for (const [key, start] of starts) {
      const tp = topicPartitionOfKey(key);
      // Released meanwhile: no longer read here.
      if (!consumer.assignment().some((a) => partitionKey(a) === key)) continue;
      const position = await consumer.position(tp);
      if (position >= start) continue;
      behind++;
      const task = this.tasks.get(`${this.taskOfChangelog(tp.topic)}_${tp.partition}`);
      const store = task?.stores.find((s) => s.changelog === tp.topic);
      if (task === undefined || store === undefined) {
        consumer.seek(tp, start);
        continue;
      }
      this.log(
        `standby task ${task.id}: store ${store.name} at ${tp.topic}-${tp.partition} offset ${position} is ` +
          `before its first offset ${start} (the changelog was truncated): the task is corrupted, ` +
          (this.config.processingGuarantee === 'exactly_once_v2'
            ? 'wiping its stores to rebuild them from their first offsets'
            : 'reading its stores again from their first offsets'),
      );
      corrupted.add(task);
    }
    if (behind === 0) throw error;
    for (const task of corrupted) {
      for (const store of task.stores) {
        const key = partitionKey({ topic: store.changelog, partition: task.partition });
        wipeCorruptedState(store.engine, this.config.processingGuarantee === 'exactly_once_v2');
        task.offsets.delete(key);
        const start = starts.get(key);
        // A store not read yet starts at its first offset anyway (positionNew).
        if (start === undefined) continue;
        consumer.seek(topicPartitionOfKey(key), start);
        // A source partition paused at its limit is read again from its first offset too.
        if (this.atLimit.delete(key)) consumer.resume([topicPartitionOfKey(key)]);
      }
      this.checkpoint(task, true);
    }
  }

  /** The sub-topology id whose store writes this changelog, or is restored from this source topic. */
  private taskOfChangelog(changelog: string): number | undefined {
    for (const st of this.topology.subtopologies())
      for (const name of st.stores)
        if (
          changelogTopicName(this.config.applicationId, name) === changelog ||
          this.topology.sourceChangelogs.get(name) === changelog
        )
          return st.id;
    return undefined;
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    for (const t of this.tasks.values()) this.closeTask(t);
    this.tasks.clear();
    await this.consumer?.close().catch(() => {});
    this.consumer = null;
    await this.admin?.close().catch(() => {});
    this.admin = null;
  }
}
