// The small parameter objects of the DSL, with Kafka's static constructors and fluent `with*` methods:
// Consumed, Produced, Grouped, Materialized, Named, Branched. Each is immutable: a `with*` returns a copy.

import type { KStream } from './kstream.js';
import type { Serde } from './serdes.js';
import type { StoreEngine } from './state/stores.js';
import type { StreamPartitioner, TimestampExtractor } from './topology.js';

export class Named {
  protected constructor(readonly name: string | null) {}
  static as(name: string): Named {
    return new Named(name);
  }
}

export class Consumed<K, V> {
  private constructor(
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly timestampExtractor: TimestampExtractor | null,
    readonly processorName: string | null,
  ) {}

  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Consumed<K, V> {
    return new Consumed(keySerde, valueSerde, null, null);
  }

  static as<K = unknown, V = unknown>(processorName: string): Consumed<K, V> {
    return new Consumed<K, V>(null, null, null, processorName);
  }

  static withTimestampExtractor<K = unknown, V = unknown>(extractor: TimestampExtractor): Consumed<K, V> {
    return new Consumed<K, V>(null, null, extractor, null);
  }

  withTimestampExtractor(extractor: TimestampExtractor): Consumed<K, V> {
    return new Consumed(this.keySerde, this.valueSerde, extractor, this.processorName);
  }

  withName(processorName: string): Consumed<K, V> {
    return new Consumed(this.keySerde, this.valueSerde, this.timestampExtractor, processorName);
  }
}

export class Produced<K, V> {
  private constructor(
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly partitioner: StreamPartitioner<K, V> | null,
    readonly processorName: string | null,
  ) {}

  static with<K, V>(
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
    partitioner?: StreamPartitioner<K, V>,
  ): Produced<K, V> {
    return new Produced(keySerde, valueSerde, partitioner ?? null, null);
  }

  static as<K = unknown, V = unknown>(processorName: string): Produced<K, V> {
    return new Produced<K, V>(null, null, null, processorName);
  }

  static streamPartitioner<K, V>(partitioner: StreamPartitioner<K, V>): Produced<K, V> {
    return new Produced<K, V>(null, null, partitioner, null);
  }

  withName(processorName: string): Produced<K, V> {
    return new Produced(this.keySerde, this.valueSerde, this.partitioner, processorName);
  }
}

export class Grouped<K, V> {
  private constructor(
    readonly name: string | null,
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
  ) {}

  static as<K = unknown, V = unknown>(name: string): Grouped<K, V> {
    return new Grouped<K, V>(name, null, null);
  }

  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Grouped<K, V> {
    return new Grouped(null, keySerde, valueSerde);
  }

  withName(name: string): Grouped<K, V> {
    return new Grouped(name, this.keySerde, this.valueSerde);
  }

  withKeySerde(keySerde: Serde<K>): Grouped<K, V> {
    return new Grouped(this.name, keySerde, this.valueSerde);
  }

  withValueSerde(valueSerde: Serde<V>): Grouped<K, V> {
    return new Grouped(this.name, this.keySerde, valueSerde);
  }
}

export class Materialized<K, V> {
  private constructor(
    readonly storeName: string | null,
    readonly engine: StoreEngine,
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly loggingEnabled: boolean,
    readonly logConfig: Record<string, string>,
    readonly cachingEnabled: boolean,
    /** Window and session stores: how long windows are kept (Kafka's withRetention); null: size + grace. */
    readonly retentionMs: number | null = null,
  ) {}

  /** A named store (queryable, and the base of its changelog's name); persistent, as Kafka's default. */
  static as<K = unknown, V = unknown>(storeName: string): Materialized<K, V> {
    return new Materialized<K, V>(storeName, 'persistent', null, null, true, {}, true);
  }

  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Materialized<K, V> {
    return new Materialized(null, 'persistent', keySerde, valueSerde, true, {}, true);
  }

  /** Kafka's Materialized.as(Stores.inMemoryKeyValueStore(name)). */
  static inMemory<K = unknown, V = unknown>(storeName: string): Materialized<K, V> {
    return new Materialized<K, V>(storeName, 'in-memory', null, null, true, {}, true);
  }

  private copy(changes: Partial<Materialized<K, V>>): Materialized<K, V> {
    const m = { ...this, ...changes };
    return new Materialized(
      m.storeName,
      m.engine,
      m.keySerde,
      m.valueSerde,
      m.loggingEnabled,
      m.logConfig,
      m.cachingEnabled,
      m.retentionMs,
    );
  }

  /**
   * How long a window or session store keeps its windows (at least the windows' size plus grace; Kafka's
   * Materialized.withRetention). The changelog keeps them `windowstore.changelog.additional.retention.ms` longer.
   */
  withRetention(retentionMs: number): Materialized<K, V> {
    if (!Number.isSafeInteger(retentionMs) || retentionMs < 0)
      throw new Error(`Retention must be a non-negative number of milliseconds, not ${retentionMs}`);
    return this.copy({ retentionMs });
  }

  withKeySerde(keySerde: Serde<K>): Materialized<K, V> {
    return this.copy({ keySerde });
  }

  withValueSerde(valueSerde: Serde<V>): Materialized<K, V> {
    return this.copy({ valueSerde });
  }

  withLoggingEnabled(config: Record<string, string> = {}): Materialized<K, V> {
    return this.copy({ loggingEnabled: true, logConfig: { ...config } });
  }

  withLoggingDisabled(): Materialized<K, V> {
    return this.copy({ loggingEnabled: false });
  }

  withCachingEnabled(): Materialized<K, V> {
    return this.copy({ cachingEnabled: true });
  }

  withCachingDisabled(): Materialized<K, V> {
    return this.copy({ cachingEnabled: false });
  }
}

type BranchChain<K, V> = (stream: KStream<K, V>) => KStream<K, V> | undefined;

export class Branched<K, V> {
  private constructor(
    readonly name: string | null,
    readonly chain: BranchChain<K, V> | null,
  ) {}

  static as<K = unknown, V = unknown>(name: string): Branched<K, V> {
    return new Branched<K, V>(name, null);
  }

  /** The branch goes through `chain`; what it answers is the branch in the result (none when undefined). */
  static withFunction<K, V>(chain: BranchChain<K, V>, name?: string): Branched<K, V> {
    return new Branched(name ?? null, chain);
  }

  static withConsumer<K, V>(consume: (stream: KStream<K, V>) => unknown, name?: string): Branched<K, V> {
    return new Branched<K, V>(name ?? null, (s) => {
      consume(s);
      return undefined;
    });
  }
}

/** Serdes and name of a stream-table join (Kafka's Joined). */
export class Joined<K, V, VO> {
  private constructor(
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly otherValueSerde: Serde<VO> | null,
    readonly name: string | null,
  ) {}

  static with<K, V, VO>(
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
    otherValueSerde?: Serde<VO>,
  ): Joined<K, V, VO> {
    return new Joined(keySerde, valueSerde, otherValueSerde ?? null, null);
  }

  static as<K = unknown, V = unknown, VO = unknown>(name: string): Joined<K, V, VO> {
    return new Joined<K, V, VO>(null, null, null, name);
  }

  withName(name: string): Joined<K, V, VO> {
    return new Joined(this.keySerde, this.valueSerde, this.otherValueSerde, name);
  }
}

/** Serdes, names and store settings of a stream-stream join (Kafka's StreamJoined). */
export class StreamJoined<K, V, VO> {
  private constructor(
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly otherValueSerde: Serde<VO> | null,
    readonly name: string | null,
    readonly storeName: string | null,
    readonly loggingEnabled: boolean,
    readonly logConfig: Record<string, string>,
  ) {}

  static with<K, V, VO>(
    keySerde: Serde<K>,
    valueSerde: Serde<V>,
    otherValueSerde: Serde<VO>,
  ): StreamJoined<K, V, VO> {
    return new StreamJoined(keySerde, valueSerde, otherValueSerde, null, null, true, {});
  }

  /** The base name of the join's stores (and so of their changelogs). */
  static as<K = unknown, V = unknown, VO = unknown>(storeName: string): StreamJoined<K, V, VO> {
    return new StreamJoined<K, V, VO>(null, null, null, null, storeName, true, {});
  }

  private copy(changes: Partial<StreamJoined<K, V, VO>>): StreamJoined<K, V, VO> {
    const m = { ...this, ...changes };
    return new StreamJoined(
      m.keySerde,
      m.valueSerde,
      m.otherValueSerde,
      m.name,
      m.storeName,
      m.loggingEnabled,
      m.logConfig,
    );
  }

  /** The base of the join's processor names (and of repartition topics before it). */
  withName(name: string): StreamJoined<K, V, VO> {
    return this.copy({ name });
  }

  withStoreName(storeName: string): StreamJoined<K, V, VO> {
    return this.copy({ storeName });
  }

  withKeySerde(keySerde: Serde<K>): StreamJoined<K, V, VO> {
    return this.copy({ keySerde });
  }

  withValueSerde(valueSerde: Serde<V>): StreamJoined<K, V, VO> {
    return this.copy({ valueSerde });
  }

  withOtherValueSerde(otherValueSerde: Serde<VO>): StreamJoined<K, V, VO> {
    return this.copy({ otherValueSerde });
  }

  withLoggingEnabled(config: Record<string, string> = {}): StreamJoined<K, V, VO> {
    return this.copy({ loggingEnabled: true, logConfig: { ...config } });
  }

  withLoggingDisabled(): StreamJoined<K, V, VO> {
    return this.copy({ loggingEnabled: false });
  }
}

/** How KStream.repartition() writes its repartition topic (Kafka's Repartitioned). */
export class Repartitioned<K, V> {
  private constructor(
    readonly name: string | null,
    readonly keySerde: Serde<K> | null,
    readonly valueSerde: Serde<V> | null,
    readonly numberOfPartitions: number | null,
  ) {}

  /** The topic is `<application.id>-<name>-repartition`. */
  static as<K = unknown, V = unknown>(name: string): Repartitioned<K, V> {
    return new Repartitioned<K, V>(name, null, null, null);
  }

  static with<K, V>(keySerde: Serde<K>, valueSerde: Serde<V>): Repartitioned<K, V> {
    return new Repartitioned(null, keySerde, valueSerde, null);
  }

  static numberOfPartitions<K = unknown, V = unknown>(partitions: number): Repartitioned<K, V> {
    return new Repartitioned<K, V>(null, null, null, partitions);
  }

  withName(name: string): Repartitioned<K, V> {
    return new Repartitioned(name, this.keySerde, this.valueSerde, this.numberOfPartitions);
  }

  withKeySerde(keySerde: Serde<K>): Repartitioned<K, V> {
    return new Repartitioned(this.name, keySerde, this.valueSerde, this.numberOfPartitions);
  }

  withValueSerde(valueSerde: Serde<V>): Repartitioned<K, V> {
    return new Repartitioned(this.name, this.keySerde, valueSerde, this.numberOfPartitions);
  }

  withNumberOfPartitions(partitions: number): Repartitioned<K, V> {
    if (!Number.isInteger(partitions) || partitions < 1)
      throw new RangeError('Number of partitions must be a positive integer');
    return new Repartitioned(this.name, this.keySerde, this.valueSerde, partitions);
  }
}

/**
 * The name and partitioners of a foreign-key table-table join (Kafka's TableJoined): the name is the base of its
 * processors', store's and internal topics' names; `partitioner` places the responses (keyed by this table's key)
 * and `otherPartitioner` the subscriptions (keyed by the foreign key), for tables whose topics were written with
 * custom partitioners. Without, both use the default partitioner (murmur2 of the serialized key). A partitioner
 * gets a null value, as in Kafka.
 */
export class TableJoined<K = unknown, KO = unknown> {
  private constructor(
    readonly partitioner: StreamPartitioner<K, null> | null,
    readonly otherPartitioner: StreamPartitioner<KO, null> | null,
    readonly name: string | null,
  ) {}

  static with<K = unknown, KO = unknown>(
    partitioner: StreamPartitioner<K, null> | null,
    otherPartitioner: StreamPartitioner<KO, null> | null,
  ): TableJoined<K, KO> {
    return new TableJoined<K, KO>(partitioner, otherPartitioner, null);
  }

  static as<K = unknown, KO = unknown>(name: string): TableJoined<K, KO> {
    return new TableJoined<K, KO>(null, null, name);
  }

  withName(name: string): TableJoined<K, KO> {
    return new TableJoined<K, KO>(this.partitioner, this.otherPartitioner, name);
  }

  withPartitioner(partitioner: StreamPartitioner<K, null> | null): TableJoined<K, KO> {
    return new TableJoined<K, KO>(partitioner, this.otherPartitioner, this.name);
  }

  withOtherPartitioner(otherPartitioner: StreamPartitioner<KO, null> | null): TableJoined<K, KO> {
    return new TableJoined<K, KO>(this.partitioner, otherPartitioner, this.name);
  }
}
