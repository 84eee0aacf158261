// The global stream thread: keeps the global stores (GlobalKTable, Topology.addGlobalStore) of one instance up to
// date. It reads every partition of the global topics with its own consumer (no group), first up to the end
// offsets read at start, before any stream thread starts (so a join never sees a half-loaded table), then
// continuously. Each global store's sub-topology runs as one task; its stores have no changelog (the topic is
// their changelog) and live under `<state.dir>/<application.id>/global` (`global-<n>` for the copy of the n-th
// stream thread when stream threads run in worker threads).
//
// Checkpoint (Kafka's GlobalStateManager): `global/.checkpoint` in the OffsetCheckpoint format holds, per topic
// partition, the next offset to read; it is written after each periodic flush of the stores and at close. At
// start, when every global store is persistent and the checkpoint covers every partition within its current
// offsets, the stores are kept and reading resumes there (a crash since replays what came after the last
// checkpoint: a table's puts and deletes converge again). Otherwise the directory is emptied and the stores are
// rebuilt from the beginning.
//
// Records may also go while the thread reads (DeleteRecords, or retention under a lagging reader). Its consumer
// has auto.offset.reset "none" (Kafka's getGlobalConsumerConfigs): as Kafka's GlobalStreamThread, a position out of
// range fails the thread and wipes the global state (the client ends in ERROR; start() fails while loading), so
// that a restart rebuilds the stores from what the topics hold instead of keeping records they no longer have.

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer, type ConsumerRecord } from '../../client/consumer.js';
import { KafkaProtocolError } from '../../client/errors.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { ResolvedConfig } from '../config.js';
import { StreamsError } from '../errors.js';
import type { Header, StateRestoreListener } from '../processor.js';
import type { StateStore } from '../state/stores.js';
import type { Topology } from '../topology.js';
import { readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { openEngine } from './engines.js';
import { partitionKey, topicPartitionOfKey } from './partition-key.js';
import { Task } from './task.js';

/** Kafka's GlobalStreamThread errors when a position is out of range, loading and following. */
const BOOTSTRAP_FAILED =
  'Bootstrapping global state failed. You can restart KafkaStreams to recover from this error.';
const UPDATE_FAILED =
  'Updating global state failed. You can restart KafkaStreams to launch a new GlobalStreamThread to recover from ' +
  'this error.';

const POLL_TIMEOUT_MS = 100;
/** How often the global stores' engines are flushed while running. */
const FLUSH_INTERVAL_MS = 1000;

export class GlobalStreamThread {
  private readonly consumer: Consumer;
  /** Topic -> the task of the global store it feeds. */
  private readonly taskOfTopic = new Map<string, Task>();
  private readonly tasks: Task[] = [];
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly dir: string;
  /** Records applied since start (bootstrap included). */
  applied = 0;
  /** "topic:partition" -> the next offset to read, for the checkpoint. */
  private readonly positions = new Map<string, number>();

  constructor(
    private readonly config: ResolvedConfig,
    private readonly topology: Topology,
    private readonly partitionsOf: (topic: string) => number,
    private readonly hooks: {
      log(message: string): void;
      onError(error: Error): void;
      /** KafkaStreams.setGlobalStateRestoreListener: told when loading a global store starts and ends. */
      restoreListener?: StateRestoreListener;
    },
    /** The stores' directory under `<state.dir>/<application.id>`: each worker thread keeps a copy of its own. */
    dirName = 'global',
  ) {
    this.consumer = new Consumer({
      ...config.clients.globalConsumer,
      bootstrapServers: config.bootstrapServers,
      clientId: `${config.clientId}-global-consumer`, // Kafka's getGlobalConsumerConfigs name
      autoOffsetReset: 'none',
    });
    this.dir = join(config.stateDir, config.applicationId, dirName);
  }

  store(name: string): StateStore | undefined {
    for (const t of this.tasks) {
      const s = t.stores.get(name);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  /** Loads every global store up to the topics' current ends, then keeps following them. */
  async start(): Promise<void> {
    const globals = this.topology.subtopologies().filter((st) => st.global);
    const persistent = globals.every((st) =>
      st.stores.every((name) => this.topology.stores.get(name)?.engine === 'persistent'),
    );
    const saved = persistent && existsSync(this.dir) ? readCheckpoint(this.dir) : new Map<string, number>();
    const tps = globals
      .flatMap((st) => st.sourceTopics)
      .flatMap((topic) =>
        Array.from({ length: this.partitionsOf(topic) }, (_, partition) => ({ topic, partition })),
      );
    this.consumer.assign(tps);
    const ends = await this.consumer.endOffsets(tps);
    const starts = await this.consumer.beginningOffsets(tps);
    const usable =
      saved.size > 0 &&
      tps.every((tp) => {
        const offset = saved.get(partitionKey(tp));
        const end = ends.find((e) => e.topic === tp.topic && e.partition === tp.partition)?.offset;
        const start = starts.find((e) => e.topic === tp.topic && e.partition === tp.partition)?.offset;
        return (
          offset !== undefined && end !== undefined && start !== undefined && offset >= start && offset <= end
        );
      });
    if (!usable) {
      if (saved.size > 0)
        this.hooks.log('global checkpoint does not fit the topics: rebuilding the global stores');
      rmSync(this.dir, { recursive: true, force: true });
    }
    mkdirSync(this.dir, { recursive: true });
    for (const st of globals) {
      if (!st.global) continue;
      const task = new Task(st, 0, {
        applicationId: this.config.applicationId,
        topology: this.topology,
        collector: {
          send: () => {
            throw new Error('a global store processor may not forward records');
          },
        },
        realTopic: (t) => t,
        changelogTopic: (store) => `${this.config.applicationId}-${store}-changelog`,
        partitionsOf: () => undefined,
        openEngine: (builder) => openEngine(builder, this.dir),
        defaultKeySerde: this.config.defaultKeySerde,
        defaultValueSerde: this.config.defaultValueSerde,
        deserializationExceptionHandler: this.config.deserializationExceptionHandler,
        appConfigs: this.config.appConfigs,
        wallClockMs: () => Date.now(),
        log: (m) => this.hooks.log(m),
        requestCommit: () => {},
      });
      task.init();
      this.tasks.push(task);
      for (const topic of st.sourceTopics) this.taskOfTopic.set(topic, task);
    }
    if (usable)
      for (const tp of tps) {
        const offset = saved.get(partitionKey(tp))!;
        this.consumer.seek(tp, offset);
        this.positions.set(partitionKey(tp), offset);
      }
    else {
      await this.consumer.seekToBeginning(tps);
      // Every partition gets a position, records or not, so that the next start finds all of them.
      for (const e of starts) this.positions.set(partitionKey(e), e.offset);
    }
    const pending = new Map(
      ends
        .filter((e) => e.offset > (this.positions.get(partitionKey(e)) ?? 0))
        .map((e) => [partitionKey(e), e.offset]),
    );
    const started = Date.now();
    const listener = this.hooks.restoreListener;
    const storeOf = (topic: string) => this.taskOfTopic.get(topic)?.stores.keys().next().value ?? topic;
    const loading = [...pending].map(([key, end]) => ({ tp: topicPartitionOfKey(key), end, from: 0 }));
    for (const l of loading) {
      l.from = this.positions.get(partitionKey(l.tp)) ?? 0;
      listener?.onRestoreStart(l.tp, storeOf(l.tp.topic), l.from, l.end);
    }
    this.running = true;
    while (pending.size > 0 && this.running) {
      for (const r of await this.pollOrWipe(BOOTSTRAP_FAILED)) this.apply(r);
      for (const [key, end] of pending) {
        const position = await this.consumer.position(topicPartitionOfKey(key));
        if (position >= end) pending.delete(key);
      }
    }
    // The offsets the load covered (a compacted topic's gaps included, where Kafka counts records).
    for (const l of loading) listener?.onRestoreEnd(l.tp, storeOf(l.tp.topic), l.end - l.from);
    this.checkpoint();
    this.hooks.log(`global stores loaded: ${this.applied} records in ${Date.now() - started} ms`);
    this.loop = this.run().catch((e: unknown) => {
      this.running = false;
      this.hooks.onError(e instanceof Error ? e : new Error(String(e)));
    });
  }

  private apply(r: ConsumerRecord): void {
    const task = this.taskOfTopic.get(r.topic);
    if (task === undefined) return;
    task.process({
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: r.timestamp,
      key: r.key,
      value: r.value,
      headers: r.headers as Header[],
    });
    this.positions.set(partitionKey(r), r.offset + 1);
    this.applied++;
  }

  /** Flushes the stores, then records how far they have read (never further than what they hold). */
  private checkpoint(): void {
    for (const t of this.tasks) t.flush();
    if (this.positions.size > 0) writeCheckpoint(this.dir, this.positions);
  }

  private async run(): Promise<void> {
    let lastFlushMs = Date.now();
    while (this.running) {
      for (const r of await this.pollOrWipe(UPDATE_FAILED)) this.apply(r);
      if (Date.now() - lastFlushMs >= FLUSH_INTERVAL_MS) {
        this.checkpoint();
        lastFlushMs = Date.now();
      }
    }
  }

  /**
   * A poll; when a position is out of range, the stores are closed and their directory removed, and the thread
   * fails with `failure` (Kafka's messages).
   */
  private async pollOrWipe(failure: string): Promise<ConsumerRecord[]> {
    try {
      return await this.consumer.poll(POLL_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof KafkaProtocolError) || err.code !== ErrorCode.OFFSET_OUT_OF_RANGE) throw err;
      this.hooks.log(
        `global thread: ${err.message}: the global state is inconsistent with its topics, wiping it; ` +
          'restart KafkaStreams to rebuild it',
      );
      this.running = false;
      for (const t of this.tasks) t.close();
      this.tasks.length = 0;
      rmSync(this.dir, { recursive: true, force: true });
      throw new StreamsError(failure);
    }
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    if (this.tasks.length > 0) this.checkpoint();
    for (const t of this.tasks) t.close();
    this.tasks.length = 0;
    await this.consumer.close().catch(() => {});
  }
}
