// The global stream thread: keeps the global stores (GlobalKTable, Topology.addGlobalStore) of one instance up to
// date. It reads every partition of the global topics with its own consumer (no group), first up to the end
// offsets read at start, before any stream thread starts (so a join never sees a half-loaded table), then
// continuously. Each global store's sub-topology runs as one task; its stores have no changelog and are rebuilt
// from the topic at every start, under `<state.dir>/<application.id>/global` (emptied first: a checkpoint for
// global stores is not written yet, and stale keys deleted meanwhile would otherwise survive).

import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer, type ConsumerRecord } from '../../client/consumer.js';
import type { ResolvedConfig } from '../config.js';
import type { Header } from '../processor.js';
import type { StateStore } from '../state/stores.js';
import type { Topology } from '../topology.js';
import { openEngine } from './engines.js';
import { Task } from './task.js';

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

  constructor(
    private readonly config: ResolvedConfig,
    private readonly topology: Topology,
    private readonly partitionsOf: (topic: string) => number,
    private readonly hooks: { log(message: string): void; onError(error: Error): void },
  ) {
    this.consumer = new Consumer({
      bootstrapServers: config.bootstrapServers,
      clientId: `${config.clientId}-GlobalStreamThread-consumer`,
      autoOffsetReset: 'earliest',
    });
    this.dir = join(config.stateDir, config.applicationId, 'global');
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
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    for (const st of this.topology.subtopologies()) {
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
        wallClockMs: () => Date.now(),
        log: (m) => this.hooks.log(m),
        requestCommit: () => {},
      });
      task.init();
      this.tasks.push(task);
      for (const topic of st.sourceTopics) this.taskOfTopic.set(topic, task);
    }
    const tps = [...this.taskOfTopic.keys()].flatMap((topic) =>
      Array.from({ length: this.partitionsOf(topic) }, (_, partition) => ({ topic, partition })),
    );
    this.consumer.assign(tps);
    await this.consumer.seekToBeginning(tps);
    const ends = await this.consumer.endOffsets(tps);
    const pending = new Map(
      ends.filter((e) => e.offset > 0).map((e) => [`${e.topic}:${e.partition}`, e.offset]),
    );
    const started = Date.now();
    this.running = true;
    while (pending.size > 0 && this.running) {
      for (const r of await this.consumer.poll(POLL_TIMEOUT_MS)) this.apply(r);
      for (const [key, end] of pending) {
        const at = key.lastIndexOf(':');
        const position = await this.consumer.position({
          topic: key.slice(0, at),
          partition: Number(key.slice(at + 1)),
        });
        if (position >= end) pending.delete(key);
      }
    }
    for (const t of this.tasks) t.flush();
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
    this.applied++;
  }

  private async run(): Promise<void> {
    let lastFlushMs = Date.now();
    while (this.running) {
      for (const r of await this.consumer.poll(POLL_TIMEOUT_MS)) this.apply(r);
      if (Date.now() - lastFlushMs >= FLUSH_INTERVAL_MS) {
        for (const t of this.tasks) t.flush();
        lastFlushMs = Date.now();
      }
    }
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    for (const t of this.tasks) t.close();
    this.tasks.length = 0;
    await this.consumer.close().catch(() => {});
  }
}
