// KStream: a record stream in the DSL. Each operation adds one node (sometimes a few) to the topology and
// returns a new KStream for the node it added. The stream remembers its serdes (null: the configured
// defaults) and whether a key-changing operation happened upstream, in which case a grouping repartitions
// through `<application.id>-<name>-repartition` first, as Kafka does.

import {
  Branched,
  type Consumed,
  Grouped,
  type Joined,
  type Materialized,
  Named,
  Produced,
  type Repartitioned,
  type StreamJoined,
} from './dsl-options.js';
import { TopologyError } from './errors.js';
import { GlobalKTable, globalTableJoin, skipsTableJoin } from './global-ktable.js';
import type { InternalBuilder } from './internal-builder.js';
import { JoinWindows } from './join-windows.js';
import type { KeyValue } from './key-value.js';
import { KGroupedStream, type KTable, repartitionThrough, sourceTable } from './ktable.js';
import type { Processor, ProcessorContext, ProcessorSupplier, Record } from './processor.js';
import type { Serde } from './serdes.js';
import { StoreBuilder, type ValueAndTimestamp } from './state/stores.js';
import { streamStreamJoin } from './stream-join.js';
import type { TopicNameExtractor } from './topology.js';

export type Predicate<K, V> = (key: K, value: V) => boolean;

export class KStream<K, V> {
  constructor(
    /** @internal */ readonly builder: InternalBuilder,
    /** @internal the node whose output this stream is */ readonly nodeName: string,
    /** @internal */ readonly keySerde: Serde<K> | null,
    /** @internal */ readonly valueSerde: Serde<V> | null,
    /** @internal a key-changing operation happened upstream */ readonly repartitionRequired: boolean,
  ) {}

  /** Adds a processor below this stream. */
  private add<K2, V2>(
    name: string,
    makeProcessor: (context: () => ProcessorContext<unknown, unknown>) => (record: Record<K, V>) => void,
    keySerde: Serde<K2> | null,
    valueSerde: Serde<V2> | null,
    repartitionRequired: boolean,
  ): KStream<K2, V2> {
    this.builder.topology.addProcessor(name, statelessSupplier(makeProcessor), this.nodeName);
    return new KStream<K2, V2>(this.builder, name, keySerde, valueSerde, repartitionRequired);
  }

  filter(predicate: Predicate<K, V>, named?: Named): KStream<K, V> {
    const name = this.builder.nameOr(named, 'KSTREAM-FILTER-');
    return this.add(
      name,
      (ctx) => (r) => {
        if (predicate(r.key, r.value)) ctx().forward(r);
      },
      this.keySerde,
      this.valueSerde,
      this.repartitionRequired,
    );
  }

  filterNot(predicate: Predicate<K, V>, named?: Named): KStream<K, V> {
    return this.filter((k, v) => !predicate(k, v), named);
  }

  map<K2, V2>(mapper: (key: K, value: V) => KeyValue<K2, V2>, named?: Named): KStream<K2, V2> {
    const name = this.builder.nameOr(named, 'KSTREAM-MAP-');
    this.builder.keyChangingNodes.push(name);
    return this.add<K2, V2>(
      name,
      (ctx) => (r) => {
        const kv = mapper(r.key, r.value);
        ctx().forward(r.withKey(kv.key).withValue(kv.value));
      },
      null,
      null,
      true,
    );
  }

  mapValues<V2>(mapper: (value: V, key: K) => V2, named?: Named): KStream<K, V2> {
    const name = this.builder.nameOr(named, 'KSTREAM-MAPVALUES-');
    this.builder.valueChangingNodes.add(name);
    return this.add<K, V2>(
      name,
      (ctx) => (r) => ctx().forward(r.withValue(mapper(r.value, r.key))),
      this.keySerde,
      null,
      this.repartitionRequired,
    );
  }

  flatMap<K2, V2>(mapper: (key: K, value: V) => Iterable<KeyValue<K2, V2>>, named?: Named): KStream<K2, V2> {
    const name = this.builder.nameOr(named, 'KSTREAM-FLATMAP-');
    this.builder.keyChangingNodes.push(name);
    return this.add<K2, V2>(
      name,
      (ctx) => (r) => {
        for (const kv of mapper(r.key, r.value)) ctx().forward(r.withKey(kv.key).withValue(kv.value));
      },
      null,
      null,
      true,
    );
  }

  flatMapValues<V2>(mapper: (value: V, key: K) => Iterable<V2>, named?: Named): KStream<K, V2> {
    const name = this.builder.nameOr(named, 'KSTREAM-FLATMAPVALUES-');
    this.builder.valueChangingNodes.add(name);
    return this.add<K, V2>(
      name,
      (ctx) => (r) => {
        for (const v of mapper(r.value, r.key)) ctx().forward(r.withValue(v));
      },
      this.keySerde,
      null,
      this.repartitionRequired,
    );
  }

  selectKey<K2>(mapper: (key: K, value: V) => K2, named?: Named): KStream<K2, V> {
    const name = this.builder.nameOr(named, 'KSTREAM-KEY-SELECT-');
    this.builder.keyChangingNodes.push(name);
    return this.add<K2, V>(
      name,
      (ctx) => (r) => ctx().forward(r.withKey(mapper(r.key, r.value))),
      null,
      this.valueSerde,
      true,
    );
  }

  peek(action: (key: K, value: V) => void, named?: Named): KStream<K, V> {
    const name = this.builder.nameOr(named, 'KSTREAM-PEEK-');
    return this.add(
      name,
      (ctx) => (r) => {
        action(r.key, r.value);
        ctx().forward(r);
      },
      this.keySerde,
      this.valueSerde,
      this.repartitionRequired,
    );
  }

  foreach(action: (key: K, value: V) => void, named?: Named): void {
    const name = this.builder.nameOr(named, 'KSTREAM-FOREACH-');
    this.add(name, () => (r) => action(r.key, r.value), null, null, false);
  }

  /** Splits the stream by predicates; each record goes to the first branch whose predicate it matches. */
  split(named?: Named): BranchedKStream<K, V> {
    const name = this.builder.nameOr(named, 'KSTREAM-BRANCH-');
    return new BranchedKStream(this, name);
  }

  merge(other: KStream<K, V>, named?: Named): KStream<K, V> {
    const name = this.builder.nameOr(named, 'KSTREAM-MERGE-');
    this.builder.mergeNodes.push(name);
    this.builder.topology.addProcessor(
      name,
      statelessSupplier((ctx) => (r) => ctx().forward(r)),
      this.nodeName,
      other.nodeName,
    );
    // No serdes, as Kafka's merge: neither stream's can stand for both (the defaults apply downstream).
    return new KStream<K, V>(
      this.builder,
      name,
      null,
      null,
      this.repartitionRequired || other.repartitionRequired,
    );
  }

  /** Writes the stream to a topic, or to the topic an extractor names per record. */
  to(topic: string | TopicNameExtractor<K, V>, produced?: Produced<K, V>): void {
    const name = this.builder.nameOr(
      produced?.processorName ? { name: produced.processorName } : null,
      'KSTREAM-SINK-',
    );
    this.builder.topology.addSink(
      {
        name,
        keySerializer: (produced?.keySerde ?? this.keySerde) as Serde<unknown> | undefined,
        valueSerializer: (produced?.valueSerde ?? this.valueSerde) as Serde<unknown> | undefined,
        partitioner: produced?.partitioner as never,
      },
      topic as string | TopicNameExtractor,
      this.nodeName,
    );
  }

  /**
   * Writes the stream through `<application.id>-<name>-repartition` and reads it back (name: the Repartitioned
   * name, else KSTREAM-REPARTITION-<n>), so that records are partitioned by their current key; the topic gets
   * the given partition count, else the writing sub-topology's.
   */
  repartition(repartitioned?: Repartitioned<K, V>): KStream<K, V> {
    const b = this.builder;
    const name = repartitioned?.name ?? b.newProcessorName('KSTREAM-REPARTITION-');
    const keySerde = repartitioned?.keySerde ?? this.keySerde;
    const valueSerde = repartitioned?.valueSerde ?? this.valueSerde;
    // The topic's key serde is the Repartitioned one alone (null: the default serde), as Kafka's doRepartition
    // gives its repartition node; its value serde and the returned stream's serdes fall back to this stream's.
    const source = repartitionThrough(
      b,
      this.nodeName,
      name,
      (repartitioned?.keySerde ?? null) as Serde<unknown> | null,
      valueSerde as Serde<unknown> | null,
      false,
    );
    const partitions = repartitioned?.numberOfPartitions ?? null;
    if (partitions !== null) b.topology.markInternalTopic(`${name}-repartition`, partitions);
    return new KStream<K, V>(b, source, keySerde, valueSerde, false);
  }

  /**
   * The stream as a table: the latest value per key, kept in a store (Materialized name, else
   * KSTREAM-TOTABLE-STATE-STORE-<n>); a null value deletes the key. Repartitioned first when the key changed.
   */
  toTable(named?: Named, materialized?: Materialized<K, V>): KTable<K, V> {
    const b = this.builder;
    const name = b.nameOr(named, 'KSTREAM-TOTABLE-');
    const storeName = materialized?.storeName ?? b.newStoreName('KSTREAM-TOTABLE-');
    const keySerde = materialized?.keySerde ?? this.keySerde;
    const valueSerde = materialized?.valueSerde ?? this.valueSerde;
    let parent = this.nodeName;
    if (this.repartitionRequired)
      parent = repartitionThrough(
        b,
        this.nodeName,
        name,
        keySerde as Serde<unknown> | null,
        valueSerde as Serde<unknown> | null,
      );
    const store = new StoreBuilder<K, V>(
      storeName,
      materialized?.engine ?? 'persistent',
      keySerde,
      valueSerde,
      true,
    );
    if (materialized?.loggingEnabled === false) store.withLoggingDisabled();
    else store.withLoggingEnabled(materialized?.logConfig ?? {});
    if (materialized?.cachingEnabled !== false) store.withCachingEnabled();
    // As builder.table(): Kafka's toTable is a source table, materialized for a store the user named (or when an
    // operation below asks).
    return sourceTable(b, name, parent, store, materialized?.storeName != null);
  }

  /**
   * Without a Grouped the grouping keeps the stream's serdes; a Grouped's own serdes replace them, and one it leaves
   * out means the default serde (Kafka builds the grouped stream from the Grouped alone: groupByKey() passes
   * Grouped.with(keySerde, valueSerde), groupByKey(Grouped.as(name)) none).
   */
  groupByKey(grouped?: Grouped<K, V>): KGroupedStream<K, V> {
    return new KGroupedStream<K, V>(
      this.builder,
      this.nodeName,
      grouped === undefined ? this.keySerde : grouped.keySerde,
      grouped === undefined ? this.valueSerde : grouped.valueSerde,
      this.repartitionRequired,
      grouped?.name ?? null,
    );
  }

  /**
   * As groupByKey: without a Grouped the stream's value serde (Kafka's Grouped.with(null, valueSerde)), else the
   * Grouped's serdes, the default ones where it has none.
   */
  groupBy<K2>(selector: (key: K, value: V) => K2, grouped?: Grouped<K2, V>): KGroupedStream<K2, V> {
    const selected = this.selectKey(selector);
    return new KGroupedStream<K2, V>(
      this.builder,
      selected.nodeName,
      grouped === undefined ? null : grouped.keySerde,
      grouped === undefined ? this.valueSerde : grouped.valueSerde,
      true,
      grouped?.name ?? null,
    );
  }

  /** Runs a Processor API processor on the stream; `stores` are connected to it. */
  process<K2, V2>(supplier: ProcessorSupplier<K, V, K2, V2>, ...stores: string[]): KStream<K2, V2> {
    const name = this.builder.newProcessorName('KSTREAM-PROCESSOR-');
    this.builder.topology.addProcessor(name, supplier, this.nodeName);
    if (stores.length > 0) this.builder.topology.connectProcessorAndStateStores(name, ...stores);
    return new KStream<K2, V2>(this.builder, name, null, null, true);
  }

  /** As process(), for a processor that leaves keys alone (no repartition needed downstream). */
  processValues<V2>(supplier: ProcessorSupplier<K, V, K, V2>, ...stores: string[]): KStream<K, V2> {
    const name = this.builder.newProcessorName('KSTREAM-PROCESSVALUES-');
    this.builder.topology.addProcessor(name, supplier, this.nodeName);
    if (stores.length > 0) this.builder.topology.connectProcessorAndStateStores(name, ...stores);
    return new KStream<K, V2>(this.builder, name, this.keySerde, null, this.repartitionRequired);
  }

  /**
   * Joins this stream with another stream within a time window (JoinWindows), with a table on the key (Kafka's
   * stream-table join: records without a table value are dropped), or with a global table on a key the
   * selector picks from each record.
   */
  join<VO, VR>(
    other: KStream<K, VO>,
    joiner: (value: V, otherValue: VO, key: K) => VR,
    windows: JoinWindows,
    streamJoined?: StreamJoined<K, V, VO>,
  ): KStream<K, VR>;
  join<VT, VR>(
    table: KTable<K, VT>,
    joiner: (value: V, tableValue: VT, key: K) => VR,
    joined?: Joined<K, V, VT>,
  ): KStream<K, VR>;
  join<GK, GV, VR>(
    globalTable: GlobalKTable<GK, GV>,
    keySelector: (key: K, value: V) => GK,
    joiner: (value: V, globalValue: GV, key: K) => VR,
    named?: Named,
  ): KStream<K, VR>;
  join(other: unknown, a: unknown, b?: unknown, c?: unknown): KStream<K, unknown> {
    return this.dispatchJoin(other, a, b, c, false, false);
  }

  /** As join(), keeping this stream's records without a partner (the joiner gets null). */
  leftJoin<VO, VR>(
    other: KStream<K, VO>,
    joiner: (value: V, otherValue: VO | null, key: K) => VR,
    windows: JoinWindows,
    streamJoined?: StreamJoined<K, V, VO>,
  ): KStream<K, VR>;
  leftJoin<VT, VR>(
    table: KTable<K, VT>,
    joiner: (value: V, tableValue: VT | null, key: K) => VR,
    joined?: Joined<K, V, VT>,
  ): KStream<K, VR>;
  leftJoin<GK, GV, VR>(
    globalTable: GlobalKTable<GK, GV>,
    keySelector: (key: K, value: V) => GK,
    joiner: (value: V, globalValue: GV | null, key: K) => VR,
    named?: Named,
  ): KStream<K, VR>;
  leftJoin(other: unknown, a: unknown, b?: unknown, c?: unknown): KStream<K, unknown> {
    return this.dispatchJoin(other, a, b, c, true, false);
  }

  /** A windowed stream-stream join keeping the records of either side without a partner. */
  outerJoin<VO, VR>(
    other: KStream<K, VO>,
    joiner: (value: V | null, otherValue: VO | null, key: K) => VR,
    windows: JoinWindows,
    streamJoined?: StreamJoined<K, V, VO>,
  ): KStream<K, VR> {
    return streamStreamJoin(this, other, joiner, windows, streamJoined, true, true);
  }

  private dispatchJoin(
    other: unknown,
    a: unknown,
    b: unknown,
    c: unknown,
    left: boolean,
    right: boolean,
  ): KStream<K, unknown> {
    type Joiner = (v: unknown, o: unknown, k: unknown) => unknown;
    if (other instanceof KStream) {
      if (!(b instanceof JoinWindows)) throw new TopologyError('a stream-stream join needs JoinWindows');
      return streamStreamJoin<K, V, unknown, unknown>(
        this,
        other as KStream<K, unknown>,
        a as Joiner,
        b,
        c as StreamJoined<K, V, unknown>,
        left,
        right,
      );
    }
    if (other instanceof GlobalKTable)
      return globalTableJoin<K, V, unknown, unknown, unknown>(
        this,
        other as GlobalKTable<unknown, unknown>,
        a as (k: K, v: V) => unknown,
        b as Joiner,
        c as Named,
        left,
      );
    return this.tableJoin(other as KTable<K, unknown>, a as Joiner, b as Joined<K, V, unknown>, left);
  }

  private tableJoin<VT, VR>(
    table: KTable<K, VT>,
    joiner: (value: V, tableValue: VT | null, key: K) => VR,
    joined: Joined<K, V, VT> | undefined,
    left: boolean,
  ): KStream<K, VR> {
    const getter = table.valueGetter;
    if (getter === null)
      throw new TopologyError('a stream-table join needs a table whose values can be read');
    const keySerde = joined?.keySerde ?? this.keySerde;
    const valueSerde = joined?.valueSerde ?? this.valueSerde;
    let parent = this.nodeName;
    if (this.repartitionRequired)
      parent = repartitionThrough(
        this.builder,
        this.nodeName,
        joined?.name ?? this.nodeName,
        keySerde as Serde<unknown> | null,
        valueSerde as Serde<unknown> | null,
      );
    const name = this.builder.nameOr(joined, left ? 'KSTREAM-LEFTJOIN-' : 'KSTREAM-JOIN-');
    this.builder.topology.addProcessor(
      name,
      (): Processor<K, V, K, VR> => {
        let context: ProcessorContext<K, VR>;
        let get: (key: K) => ValueAndTimestamp<VT> | null;
        return {
          init(c) {
            context = c;
            get = getter.init(c as ProcessorContext<unknown, unknown>);
          },
          process(r) {
            if (skipsTableJoin(left, r.key, r.value, r.key)) return;
            // A left join's record without a key (KIP-962) has no table row to look up.
            if (r.key === null || r.key === undefined) {
              context.forward(r.withValue(joiner(r.value, null, r.key)));
              return;
            }
            const tableValue = get(r.key)?.value ?? null;
            if (tableValue === null && !left) return;
            context.forward(r.withValue(joiner(r.value, tableValue, r.key)));
          },
        };
      },
      parent,
    );
    this.builder.topology.connectProcessorAndStateStores(name, ...getter.stores);
    this.builder.topology.markCopartitioned(name);
    return new KStream<K, VR>(this.builder, name, keySerde, null, false);
  }

  /** @internal for KTable */
  static fromTable<K, V>(table: KTable<K, V>, name: string): KStream<K, V> {
    return new KStream(table.builder, name, table.keySerde, table.valueSerde, false);
  }
}

/** The result of split(): branches added in order, then a default branch or none. */
export class BranchedKStream<K, V> {
  private readonly predicates: Predicate<K, V>[] = [];
  private readonly childNames: string[] = [];
  private readonly out: { [name: string]: KStream<K, V> } = {};

  constructor(
    private readonly source: KStream<K, V>,
    private readonly splitterName: string,
  ) {
    const predicates = this.predicates;
    const childNames = this.childNames;
    source.builder.topology.addProcessor(
      splitterName,
      statelessSupplier<K, V>((ctx) => (r) => {
        for (let i = 0; i < predicates.length; i++) {
          if (predicates[i]!(r.key, r.value)) return ctx().forward(r, childNames[i]);
        }
        if (childNames.length > predicates.length) ctx().forward(r, childNames[predicates.length]);
      }),
      source.nodeName,
    );
  }

  branch(predicate: Predicate<K, V>, branched?: Branched<K, V>): this {
    this.predicates.push(predicate);
    this.createBranch(branched, this.predicates.length);
    return this;
  }

  defaultBranch(branched?: Branched<K, V>): { [name: string]: KStream<K, V> } {
    this.createBranch(branched, 0);
    return this.out;
  }

  noDefaultBranch(): { [name: string]: KStream<K, V> } {
    return this.out;
  }

  private createBranch(branched: Branched<K, V> | undefined, index: number): void {
    const childName = this.splitterName + (branched?.name ?? String(index));
    this.childNames.push(childName);
    this.source.builder.newProcessorName(childName);
    this.source.builder.topology.addProcessor(
      childName,
      statelessSupplier<K, V>((ctx) => (r) => ctx().forward(r)),
      this.splitterName,
    );
    const stream = new KStream<K, V>(
      this.source.builder,
      childName,
      this.source.keySerde,
      this.source.valueSerde,
      this.source.repartitionRequired,
    );
    if (branched?.chain) {
      const result = branched.chain(stream);
      if (result) this.out[childName] = result;
    } else {
      this.out[childName] = stream;
    }
  }
}

/** A processor supplier for the DSL's one-function operations. */
export function statelessSupplier<K, V>(
  make: (context: () => ProcessorContext<unknown, unknown>) => (record: Record<K, V>) => void,
): ProcessorSupplier<unknown, unknown, unknown, unknown> {
  return () => {
    let context: ProcessorContext<unknown, unknown> | null = null;
    const process = make(() => context!);
    const processor: Processor<K, V, unknown, unknown> = {
      init(c) {
        context = c;
      },
      process,
    };
    return processor as Processor<unknown, unknown, unknown, unknown>;
  };
}

export type { Consumed };
export { Branched, Grouped, Named, Produced };
