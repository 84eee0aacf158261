// StreamsBuilder: where a DSL application starts. stream() and table() add source nodes; build() hands back the
// Topology that KafkaStreams or TopologyTestDriver runs.

import { topologyOptimizations } from './config.js';
import { type Consumed, Materialized } from './dsl-options.js';
import { TopologyError } from './errors.js';
import { GlobalKTable } from './global-ktable.js';
import { InternalBuilder } from './internal-builder.js';
import { KStream } from './kstream.js';
import { type KTable, sourceTable, tableSourceSupplier } from './ktable.js';
import { mergeRepartitionTopics } from './merge-repartitions.js';
import { rewriteSelfJoins } from './self-join.js';
import type { Serde } from './serdes.js';
import { StoreBuilder } from './state/stores.js';
import type { Topology } from './topology.js';

export class StreamsBuilder {
  private readonly internal = new InternalBuilder();
  /** The stores of builder.table() with their topics (Kafka's tableSourceNodes), for reuse.ktable.source.topics. */
  private readonly tableSources: { store: StoreBuilder; topic: string }[] = [];
  private selfJoinsRewritten = false;
  private repartitionsMerged = false;
  /** The source nodes made by stream(), which later stream()s of the same topics share. */
  private readonly streamSources = new Set<string>();

  stream<K, V>(topics: string | string[], consumed?: Consumed<K, V>): KStream<K, V> {
    const list = typeof topics === 'string' ? [topics] : topics;
    const name = consumed?.processorName ?? this.internal.newProcessorName('KSTREAM-SOURCE-');
    const existing = this.streamSourceOf(list);
    if (existing !== null)
      return new KStream<K, V>(
        this.internal,
        existing,
        consumed?.keySerde ?? null,
        consumed?.valueSerde ?? null,
        false,
      );
    this.streamSources.add(name);
    this.internal.topology.addSource(
      {
        name,
        keyDeserializer: (consumed?.keySerde ?? undefined) as Serde<unknown> | undefined,
        valueDeserializer: (consumed?.valueSerde ?? undefined) as Serde<unknown> | undefined,
        timestampExtractor: consumed?.timestampExtractor ?? undefined,
      },
      ...list,
    );
    return new KStream<K, V>(
      this.internal,
      name,
      consumed?.keySerde ?? null,
      consumed?.valueSerde ?? null,
      false,
    );
  }

  /**
   * The source of an earlier stream() of the same topics, which a new stream() of them shares: Kafka's
   * InternalStreamsBuilder.mergeDuplicateSourceNodes merges such sources into the first one (its deserializers
   * read the records; the later one's name is still taken from the counter). Overlapping but not equal topics are
   * refused with Kafka's message; a topic of a table or global table goes on to addSource's check.
   */
  private streamSourceOf(topics: string[]): string | null {
    const topology = this.internal.topology;
    for (const topic of topics) {
      const source = topology.sourceNodeOfTopic(topic);
      if (source === undefined || !this.streamSources.has(source.name)) continue;
      const same =
        source.topics.length === new Set(topics).size && topics.every((t) => source.topics.includes(t));
      if (!same)
        throw new TopologyError('Two source nodes are subscribed to overlapping but not equal input topics');
      return source.name;
    }
    return null;
  }

  /** A table of a topic's latest value per key, materialized in a store (logged to its changelog). */
  table<K, V>(topic: string, consumed?: Consumed<K, V>, materialized?: Materialized<K, V>): KTable<K, V> {
    const b = this.internal;
    const m = materialized ?? Materialized.with<K, V>(null as never, null as never);
    // Kafka names the store first (`<topic>-STATE-STORE-<n>`), then the source and the table's processor.
    const storeName = m.storeName ?? b.newStoreName(`${topic}-`);
    const sourceName = consumed?.processorName ?? b.newProcessorName('KSTREAM-SOURCE-');
    const tableName = b.newProcessorName('KTABLE-SOURCE-');
    const keySerde = m.keySerde ?? consumed?.keySerde ?? null;
    const valueSerde = m.valueSerde ?? consumed?.valueSerde ?? null;
    b.topology.addSource(
      {
        name: sourceName,
        keyDeserializer: (consumed?.keySerde ?? undefined) as Serde<unknown> | undefined,
        valueDeserializer: (consumed?.valueSerde ?? undefined) as Serde<unknown> | undefined,
        timestampExtractor: consumed?.timestampExtractor ?? undefined,
      },
      topic,
    );
    const store = new StoreBuilder<K, V>(storeName, m.engine, keySerde, valueSerde, true);
    if (!m.loggingEnabled) store.withLoggingDisabled();
    if (m.cachingEnabled) store.withCachingEnabled();
    this.tableSources.push({ store: store as StoreBuilder, topic });
    // Kafka materializes a source table only for a store the user named (or when an operation below asks).
    return sourceTable(b, tableName, sourceName, store, m.storeName !== null);
  }

  /**
   * A table of the whole topic (all partitions) on every instance, kept in a global store that a global thread
   * feeds; no changelog (restored from the topic).
   */
  globalTable<K, V>(
    topic: string,
    consumed?: Consumed<K, V>,
    materialized?: Materialized<K, V>,
  ): GlobalKTable<K, V> {
    const b = this.internal;
    const m = materialized ?? Materialized.with<K, V>(null as never, null as never);
    const storeName = m.storeName ?? b.newStoreName(`${topic}-`);
    const sourceName = consumed?.processorName ?? b.newProcessorName('KSTREAM-SOURCE-');
    const tableName = b.newProcessorName('KTABLE-SOURCE-');
    const keySerde = m.keySerde ?? consumed?.keySerde ?? null;
    const valueSerde = m.valueSerde ?? consumed?.valueSerde ?? null;
    const store = new StoreBuilder<K, V>(storeName, m.engine, keySerde, valueSerde, true);
    b.topology.addGlobalStore(
      store as StoreBuilder,
      sourceName,
      (consumed?.keySerde ?? null) as Serde<unknown> | null,
      (consumed?.valueSerde ?? null) as Serde<unknown> | null,
      topic,
      tableName,
      tableSourceSupplier<K, V>(storeName) as never,
    );
    return new GlobalKTable<K, V>(b, storeName);
  }

  /** Adds a store for Processor API processors of the DSL (connect it with process(..., storeName)). */
  addStateStore(store: StoreBuilder): this {
    this.internal.topology.addStateStore(store);
    return this;
  }

  /**
   * The topology. As Kafka's build(props), applies the topology.optimization the properties ask for (an invalid
   * value is refused); build() without them applies none, whatever the KafkaStreams properties say. Kafka's
   * three optimizations are applied in its order: reuse.ktable.source.topics, merge.repartition.topics,
   * single.store.self.join.
   */
  build(props?: Readonly<Record<string, unknown>>): Topology {
    const optimizations = props === undefined ? [] : topologyOptimizations(props);
    if (optimizations.includes('reuse.ktable.source.topics')) this.reuseTableSourceTopics();
    if (optimizations.includes('merge.repartition.topics') && !this.repartitionsMerged) {
      this.repartitionsMerged = true;
      mergeRepartitionTopics(this.internal);
    }
    if (optimizations.includes('single.store.self.join') && !this.selfJoinsRewritten) {
      this.selfJoinsRewritten = true;
      rewriteSelfJoins(this.internal);
    }
    return this.internal.topology;
  }

  /**
   * reuse.ktable.source.topics (Kafka's TableSourceNode with reuseSourceTopicForChangeLog): the store of each
   * materialized builder.table() writes no changelog and is restored from the table's topic instead, even one
   * whose logging the user disabled. A table never materialized has no store to connect.
   */
  private reuseTableSourceTopics(): void {
    const topology = this.internal.topology;
    for (const { store, topic } of this.tableSources) {
      if (topology.stores.get(store.name) !== store || topology.sourceChangelogs.has(store.name)) continue;
      store.withLoggingDisabled();
      topology.connectSourceStoreAndTopic(store.name, topic);
    }
  }
}
