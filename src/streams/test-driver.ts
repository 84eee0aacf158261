// TopologyTestDriver: runs a topology in-process, without a broker, for users' unit tests (Kafka's
// kafka-streams-test-utils). Every topic has one partition, so each sub-topology is one task ("N_0"). Time is
// the driver's: record timestamps come from the test, and wall-clock punctuators fire only when the test calls
// advanceWallClockTime(). A record written to a topic the topology reads (a repartition topic) is processed
// at once, before pipeInput returns, so a test sees the whole effect of one input record.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ResolvedConfig, resolveConfig, type StreamsProperties } from './config.js';
import type { Header } from './processor.js';
import { openEngine } from './runtime/engines.js';
import { type RawRecord, Task } from './runtime/task.js';
import type { Deserializer, Serializer } from './serdes.js';
import { CacheBudget } from './state/record-cache.js';
import { SessionStore } from './state/session-store.js';
import { TimestampedStore } from './state/store-stack.js';
import type { KeyValue, KeyValueStore, StateStore } from './state/stores.js';
import { TimestampedWindowStore } from './state/window-store.js';
import type { Topology } from './topology.js';

export interface TestRecord<K, V> {
  key: K | null;
  value: V | null;
  timestamp: number;
  headers: Header[];
}

interface StoredOutput {
  key: Buffer | null;
  value: Buffer | null;
  timestamp: number;
  headers: Header[];
}

export class TopologyTestDriver {
  private readonly config: ResolvedConfig;
  private readonly tasks = new Map<number, Task>();
  private readonly outputs = new Map<string, StoredOutput[]>();
  private readonly offsets = new Map<string, number>();
  private readonly pending: RawRecord[] = [];
  private wallClockMs: number;
  private readonly stateDir: string;
  private closed = false;

  constructor(
    private readonly topology: Topology,
    props: StreamsProperties = {},
    initialWallClockTimeMs = Date.now(),
  ) {
    this.config = resolveConfig(props, false);
    this.wallClockMs = initialWallClockTimeMs;
    this.stateDir = mkdtempSync(join(props['state.dir'] ?? tmpdir(), 'brook-streams-driver-'));
    const prefix = `${this.config.applicationId}-`;
    const internal = topology.internalTopics;
    const cacheBudget = this.config.cacheMaxBytes > 0 ? new CacheBudget(this.config.cacheMaxBytes) : null;
    for (const st of topology.subtopologies()) {
      const task = new Task(st, 0, {
        applicationId: this.config.applicationId,
        topology,
        collector: {
          send: (topic, key, value, timestamp, headers) =>
            this.capture(topic, key, value, timestamp, headers),
        },
        realTopic: (t) => (internal.has(t) ? prefix + t : t),
        changelogTopic: (store) => `${prefix}${store}-changelog`,
        partitionsOf: () => 1,
        openEngine: (builder, taskId) => openEngine(builder, join(this.stateDir, taskId)),
        defaultKeySerde: this.config.defaultKeySerde,
        defaultValueSerde: this.config.defaultValueSerde,
        deserializationExceptionHandler: this.config.deserializationExceptionHandler,
        processingExceptionHandler: this.config.processingExceptionHandler,
        productionExceptionHandler: this.config.productionExceptionHandler,
        defaultTimestampExtractor: this.config.defaultTimestampExtractor,
        appConfigs: this.config.appConfigs,
        wallClockMs: () => this.wallClockMs,
        log: () => {},
        requestCommit: () => {},
        globalStore: (name) => this.globalStore(name),
        cacheBudget,
      });
      this.tasks.set(st.id, task);
    }
    for (const task of this.tasks.values()) task.init();
  }

  private capture(
    topic: string,
    key: Buffer | null,
    value: Buffer | null,
    timestamp: number,
    headers: readonly Header[],
  ): void {
    let list = this.outputs.get(topic);
    if (list === undefined) this.outputs.set(topic, (list = []));
    list.push({ key, value, timestamp, headers: [...headers] });
    const logical = this.logicalTopic(topic);
    if (logical !== null) this.pending.push(this.raw(logical, key, value, timestamp, [...headers]));
  }

  /** The topology's name for a real topic it reads, or null. */
  private logicalTopic(topic: string): string | null {
    const prefix = `${this.config.applicationId}-`;
    if (topic.startsWith(prefix) && this.topology.internalTopics.has(topic.slice(prefix.length)))
      return topic.slice(prefix.length);
    if (this.topology.sourceNodeOfTopic(topic) !== undefined && !this.topology.internalTopics.has(topic))
      return topic;
    return null;
  }

  private raw(
    topic: string,
    key: Buffer | null,
    value: Buffer | null,
    timestamp: number,
    headers: Header[],
  ): RawRecord {
    const offset = this.offsets.get(topic) ?? 0;
    this.offsets.set(topic, offset + 1);
    return { topic, partition: 0, offset, timestamp, key, value, headers };
  }

  /** Processes one record of an input topic, and everything it causes. */
  pipeRaw(
    topic: string,
    key: Buffer | null,
    value: Buffer | null,
    timestamp: number,
    headers: Header[] = [],
  ): void {
    assert.ok(!this.closed, 'the driver is closed');
    const logical = this.logicalTopic(topic);
    if (logical === null) throw new Error(`Unknown topic: ${topic}`);
    this.pending.push(this.raw(logical, key, value, timestamp, headers));
    this.drain();
  }

  /**
   * Processes what is pending, then commits as Kafka's driver does after each input record: the record caches
   * are flushed (what they forward may write to repartition topics, processed in turn).
   */
  private drain(): void {
    for (;;) {
      while (this.pending.length > 0) {
        const next = this.pending.shift()!;
        this.tasks.get(this.topology.subtopologyOfTopic(next.topic)!.id)!.process(next);
      }
      for (const task of this.tasks.values()) task.flushCaches();
      if (this.pending.length === 0) return;
    }
  }

  createInputTopic<K, V>(
    topic: string,
    keySerializer: Serializer<K>,
    valueSerializer: Serializer<V>,
    startTimestampMs = this.wallClockMs,
    autoAdvanceMs = 0,
  ): TestInputTopic<K, V> {
    if (this.logicalTopic(topic) === null) throw new Error(`Unknown topic: ${topic}`);
    return new TestInputTopic(this, topic, keySerializer, valueSerializer, startTimestampMs, autoAdvanceMs);
  }

  createOutputTopic<K, V>(
    topic: string,
    keyDeserializer: Deserializer<K>,
    valueDeserializer: Deserializer<V>,
  ): TestOutputTopic<K, V> {
    return new TestOutputTopic(this, topic, keyDeserializer, valueDeserializer);
  }

  /** @internal the records written to a topic and not yet read by a TestOutputTopic. */
  takeOutput(topic: string): StoredOutput | undefined {
    return this.outputs.get(topic)?.shift();
  }

  /** @internal */
  outputSize(topic: string): number {
    return this.outputs.get(topic)?.length ?? 0;
  }

  producedTopicNames(): string[] {
    return [...this.outputs.keys()];
  }

  advanceWallClockTime(ms: number): void {
    this.wallClockMs += ms;
    for (const task of this.tasks.values()) task.punctuate('WALL_CLOCK_TIME', this.wallClockMs);
    this.drain();
  }

  private globalStore(name: string): StateStore | undefined {
    for (const task of this.tasks.values())
      if (task.subtopology.global) return task.stores.get(name) ?? undefined;
    return undefined;
  }

  getStateStore(name: string): StateStore | null {
    for (const task of this.tasks.values()) {
      const s = task.stores.get(name);
      if (s !== undefined) return s;
    }
    return null;
  }

  /** A key-value store; for a timestamped store, its values without timestamps. */
  getKeyValueStore<K, V>(name: string): KeyValueStore<K, V> | null {
    const s = this.getStateStore(name);
    if (s instanceof TimestampedStore) return (s as TimestampedStore<K, V>).plainView();
    return (s as KeyValueStore<K, V> | null) ?? null;
  }

  getTimestampedWindowStore<K, V>(name: string): TimestampedWindowStore<K, V> | null {
    const s = this.getStateStore(name);
    return s instanceof TimestampedWindowStore ? (s as TimestampedWindowStore<K, V>) : null;
  }

  getSessionStore<K, V>(name: string): SessionStore<K, V> | null {
    const s = this.getStateStore(name);
    return s instanceof SessionStore ? (s as SessionStore<K, V>) : null;
  }

  getTimestampedKeyValueStore<K, V>(name: string): TimestampedStore<K, V> | null {
    const s = this.getStateStore(name);
    return s instanceof TimestampedStore ? (s as TimestampedStore<K, V>) : null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const task of this.tasks.values()) task.close();
    rmSync(this.stateDir, { recursive: true, force: true });
  }
}

export class TestInputTopic<K, V> {
  private currentTimeMs: number;

  constructor(
    private readonly driver: TopologyTestDriver,
    private readonly topic: string,
    private readonly keySerializer: Serializer<K>,
    private readonly valueSerializer: Serializer<V>,
    startTimestampMs: number,
    private readonly autoAdvanceMs: number,
  ) {
    this.currentTimeMs = startTimestampMs;
  }

  advanceTime(ms: number): void {
    this.currentTimeMs += ms;
  }

  pipeInput(key: K | null, value: V | null, timestampMs?: number, headers: Header[] = []): void {
    let ts = timestampMs;
    if (ts === undefined) {
      ts = this.currentTimeMs;
      this.currentTimeMs += this.autoAdvanceMs;
    }
    this.driver.pipeRaw(
      this.topic,
      this.keySerializer.serialize(this.topic, key),
      this.valueSerializer.serialize(this.topic, value),
      ts,
      headers,
    );
  }

  pipeValueList(values: (V | null)[]): void {
    for (const v of values) this.pipeInput(null, v);
  }

  pipeKeyValueList(list: KeyValue<K | null, V | null>[]): void {
    for (const kv of list) this.pipeInput(kv.key, kv.value);
  }
}

export class TestOutputTopic<K, V> {
  constructor(
    private readonly driver: TopologyTestDriver,
    private readonly topic: string,
    private readonly keyDeserializer: Deserializer<K>,
    private readonly valueDeserializer: Deserializer<V>,
  ) {}

  readRecord(): TestRecord<K, V> {
    const r = this.driver.takeOutput(this.topic);
    if (r === undefined) throw new Error(`Empty topic: ${this.topic}`);
    return {
      key: this.keyDeserializer.deserialize(this.topic, r.key),
      value: this.valueDeserializer.deserialize(this.topic, r.value),
      timestamp: r.timestamp,
      headers: r.headers,
    };
  }

  readValue(): V | null {
    return this.readRecord().value;
  }

  readKeyValue(): KeyValue<K | null, V | null> {
    const r = this.readRecord();
    return { key: r.key, value: r.value };
  }

  readRecordsToList(): TestRecord<K, V>[] {
    const out: TestRecord<K, V>[] = [];
    while (!this.isEmpty()) out.push(this.readRecord());
    return out;
  }

  readValuesToList(): (V | null)[] {
    return this.readRecordsToList().map((r) => r.value);
  }

  readKeyValuesToList(): KeyValue<K | null, V | null>[] {
    return this.readRecordsToList().map((r) => ({ key: r.key, value: r.value }));
  }

  /** The last value per key (a null value removes the key), as Kafka's readKeyValuesToMap. */
  readKeyValuesToMap(): Map<K | null, V> {
    const out = new Map<K | null, V>();
    for (const r of this.readRecordsToList()) {
      if (r.value === null) out.delete(r.key);
      else out.set(r.key, r.value);
    }
    return out;
  }

  getQueueSize(): number {
    return this.driver.outputSize(this.topic);
  }

  isEmpty(): boolean {
    return this.getQueueSize() === 0;
  }
}
