// KTable (a changelog stream: the latest value per key) and KGroupedStream (a stream grouped by key, ready to
// aggregate). A table's nodes forward Change values (new and old value) so that downstream table operations
// can retract; toStream() turns them back into plain values.
//
// Aggregations keep their state in a timestamped key-value store named by Materialized (or generated), logged
// to `<application.id>-<store>-changelog`. When the key changed upstream, the grouped records first go through
// the repartition topic `<name>-repartition` (name: the Grouped name, else the store name), in a new
// sub-topology, so that every record of one key reaches the same task.

import { type Grouped, Materialized, type Named, type TableJoined } from './dsl-options.js';
import { foreignKeyJoin } from './fk-join.js';
import type { InternalBuilder } from './internal-builder.js';
import type { KeyValue } from './key-value.js';
import { groupBySelect, KGroupedTable } from './kgrouped-table.js';
import { KStream, statelessSupplier } from './kstream.js';
import { Change, type Processor, type ProcessorContext, Record } from './processor.js';
import { type Serde, Serdes } from './serdes.js';
import { SessionWindowedKStream, SessionWindows } from './session-windows.js';
import type { SlidingWindows } from './sliding-windows.js';
import { CachingTimestampedStore } from './state/caching-store.js';
import type { TimestampedStore } from './state/store-stack.js';
import { StoreBuilder, type ValueAndTimestamp } from './state/stores.js';
import { type Suppressed, suppressTable } from './suppress.js';
import { tableTableJoin } from './table-join.js';
import { TimeWindowedKStream, type TimeWindows } from './windows.js';

export type Initializer<VA> = () => VA;
export type Aggregator<K, V, VA> = (key: K, value: V, aggregate: VA) => VA;
export type Reducer<V> = (aggregate: V, value: V) => V;

const REPARTITION_SUFFIX = '-repartition';

/**
 * Reads a table's current value for a key from inside a processor (Kafka's KTableValueGetter): from the table's
 * store, or through the filters and mappers between the nearest store and the table.
 */
export interface ValueGetterSupplier<K, V> {
  /** The stores the getter reads; a processor using it must be connected to them. */
  readonly stores: string[];
  init(context: ProcessorContext<unknown, unknown>): (key: K) => ValueAndTimestamp<V> | null;
}

export function storeGetter<K, V>(storeName: string): ValueGetterSupplier<K, V> {
  return {
    stores: [storeName],
    init(context) {
      const store = context.getStateStore<TimestampedStore<K, V>>(storeName);
      return (key) => store.get(key);
    },
  };
}

function derivedGetter<K, V, V2>(
  parent: ValueGetterSupplier<K, V> | null,
  map: (key: K, value: V) => V2 | null,
): ValueGetterSupplier<K, V2> | null {
  if (parent === null) return null;
  return {
    stores: parent.stores,
    init(context) {
      const get = parent.init(context);
      return (key) => {
        const vt = get(key);
        if (vt === null) return null;
        const value = map(key, vt.value);
        return value === null ? null : { value, timestamp: vt.timestamp };
      };
    },
  };
}

/**
 * Whether a table's changes carry their old values (Kafka's KTableImpl.enableSendingOldValues). A table whose
 * store the user did not name (builder.table, toTable without Materialized.as) is not materialized in Kafka: it
 * sends no old values unless an operation below forces them (groupBy, table-table and foreign-key joins,
 * suppress), and so a filter on it, knowing no old value, forwards a tombstone for every record it drops.
 */
export interface OldValues {
  /** Asks for old values; `force` materializes a source that is not. Answers whether they are sent now. */
  enable(force: boolean): boolean;
}

/** Tables that always have their old values at hand (aggregations, joins, suppress, user-named stores). */
const ALWAYS_OLD_VALUES: OldValues = { enable: () => true };

/**
 * A source table (builder.table, toTable) at node `name` below `parent`, as Kafka's KTableSource: its store is
 * added to the topology only once the table is materialized, because the user named the store (`named`) or an
 * operation below reads its values or forces old values. Until then it has no store, no changelog and no cache,
 * and forwards each record as it comes, without an old value.
 */
export function sourceTable<K, V>(
  b: InternalBuilder,
  name: string,
  parent: string,
  store: StoreBuilder<K, V>,
  named: boolean,
): KTable<K, V> {
  let materialized = false;
  const materialize = () => {
    if (materialized) return;
    materialized = true;
    b.topology.addStateStore(store as StoreBuilder, name);
  };
  b.topology.addProcessor(
    name,
    () => (materialized ? tableSourceSupplier<K, V>(store.name)() : unmaterializedSourceSupplier<K, V>()()),
    parent,
  );
  if (named) materialize();
  const table = new KTable<K, V>(
    b,
    name,
    store.keySerde,
    store.valueSerde,
    named ? store.name : null,
    null,
    () => {
      materialize();
      return storeGetter<K, V>(store.name);
    },
  );
  table.oldValues = {
    enable(force) {
      if (force) materialize();
      return materialized;
    },
  };
  return table;
}

/** A source table without a store: each record goes on as a change without an old value (Kafka's KTableSource). */
function unmaterializedSourceSupplier<K, V>() {
  return (): Processor<K, V, K, Change<V>> => {
    let context: ProcessorContext<K, Change<V>>;
    return {
      init(c) {
        context = c;
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined) return;
        context.forward(r.withValue(new Change(r.value ?? null, null)));
      },
    };
  };
}

export class KTable<K, V> {
  /** @internal Kafka's sendOldValues of this table (see OldValues); set by the operation that made it. */
  oldValues: OldValues = ALWAYS_OLD_VALUES;
  private getter: ValueGetterSupplier<K, V> | null;
  private lazyGetter: (() => ValueGetterSupplier<K, V> | null) | null = null;

  constructor(
    /** @internal */ readonly builder: InternalBuilder,
    /** @internal */ readonly nodeName: string,
    /** @internal */ readonly keySerde: Serde<K> | null,
    /** @internal */ readonly valueSerde: Serde<V> | null,
    private readonly storeName: string | null,
    /** @internal the windows of a windowed aggregation's table (for suppress) */ readonly windows: {
      readonly graceMs: number;
    } | null = null,
    /** a getter, none (null), or a function making one when first asked for (see valueGetter) */
    getter?: ValueGetterSupplier<K, V> | null | (() => ValueGetterSupplier<K, V> | null),
  ) {
    if (typeof getter === 'function') {
      this.getter = null;
      this.lazyGetter = getter;
    } else
      this.getter =
        getter !== undefined
          ? getter
          : storeName !== null && windows === null
            ? storeGetter(storeName)
            : null;
  }

  /**
   * @internal how processors below read this table's values (a windowed aggregation's reads its window store or
   * session store by the windowed key, as Kafka's view() of those aggregations; null: not readable). Asking for
   * it may materialize the table (a foreign-key join's result gets its store then), as Kafka materializes a table
   * when an operation below needs its values or its old values.
   */
  get valueGetter(): ValueGetterSupplier<K, V> | null {
    if (this.lazyGetter !== null) {
      this.getter = this.lazyGetter();
      this.lazyGetter = null;
    }
    return this.getter;
  }

  /**
   * Foreign-key join (KIP-213): each row joins the other table's row whose key `foreignKeyExtractor` picks from
   * the row's value (a row whose foreign key is null or absent joins nothing). The result is keyed by this
   * table's keys; the two tables need not be co-partitioned.
   */
  join<KO, VO, VR>(
    other: KTable<KO, VO>,
    foreignKeyExtractor: (value: V, key: K) => KO | null | undefined,
    joiner: (value: V, otherValue: VO, key: K) => VR,
    tableJoined?: TableJoined<K, KO> | Named | Materialized<K, VR>,
    materialized?: Materialized<K, VR>,
  ): KTable<K, VR>;
  /** Joins with another table on the key: an update on either side emits the joined value (inner join). */
  join<VO, VR>(
    other: KTable<K, VO>,
    joiner: (value: V, otherValue: VO, key: K) => VR,
    named?: Named,
    materialized?: Materialized<K, VR>,
  ): KTable<K, VR>;
  join(...args: unknown[]): never {
    return this.joinOverload('inner', args);
  }

  /** Foreign-key left join: as the foreign-key join(), a row without a foreign row joins with null. */
  leftJoin<KO, VO, VR>(
    other: KTable<KO, VO>,
    foreignKeyExtractor: (value: V, key: K) => KO | null | undefined,
    joiner: (value: V, otherValue: VO | null, key: K) => VR,
    tableJoined?: TableJoined<K, KO> | Named | Materialized<K, VR>,
    materialized?: Materialized<K, VR>,
  ): KTable<K, VR>;
  /** As join(), keeping this table's keys that the other lacks (the joiner gets null). */
  leftJoin<VO, VR>(
    other: KTable<K, VO>,
    joiner: (value: V, otherValue: VO | null, key: K) => VR,
    named?: Named,
    materialized?: Materialized<K, VR>,
  ): KTable<K, VR>;
  leftJoin(...args: unknown[]): never {
    return this.joinOverload('left', args);
  }

  /**
   * Which join an overloaded call of join() / leftJoin() is: a function as third argument is the joiner of a
   * foreign-key join (the second is the extractor), else the joiner came second (a join on the key).
   */
  private joinOverload(kind: 'inner' | 'left', args: unknown[]): never {
    const [other, second, third, fourth, fifth] = args;
    if (typeof third === 'function')
      return this.fkJoin(
        other as KTable<unknown, unknown>,
        second,
        third,
        kind === 'left',
        fourth,
        fifth,
      ) as never;
    return tableTableJoin(
      this,
      other as never,
      second as never,
      kind,
      third as Named,
      fourth as never,
    ) as never;
  }

  private fkJoin(
    other: KTable<unknown, unknown>,
    extractor: unknown,
    joiner: unknown,
    leftJoin: boolean,
    fourth: unknown,
    fifth: unknown,
  ): KTable<K, unknown> {
    const materialized =
      fourth instanceof Materialized ? fourth : (fifth as Materialized<K, unknown> | undefined);
    const joined = fourth instanceof Materialized ? undefined : (fourth as TableJoined | Named | undefined);
    return foreignKeyJoin(this, other, extractor as never, joiner as never, leftJoin, joined, materialized);
  }

  /** As join(), keeping the keys of either table (the joiner gets null for the missing side). */
  outerJoin<VO, VR>(
    other: KTable<K, VO>,
    joiner: (value: V | null, otherValue: VO | null, key: K) => VR,
    named?: Named,
    materialized?: Materialized<K, VR>,
  ): KTable<K, VR> {
    return tableTableJoin(this, other, joiner, 'outer', named, materialized);
  }

  /** Holds back updates: until a window closes, or for a time limit (Kafka's suppress). */
  suppress(suppressed: Suppressed, named?: Named): KTable<K, V> {
    return suppressTable(this, suppressed, named);
  }

  /**
   * Regroups the rows under new keys (and values) for count, reduce or aggregate with an adder and a subtractor;
   * the changes go through `<Grouped name or store name>-repartition`.
   */
  groupBy<KR, VR>(
    selector: (key: K, value: V) => KeyValue<KR, VR>,
    grouped?: Grouped<KR, VR>,
  ): KGroupedTable<KR, VR> {
    // The regrouping subtracts old values: a table that does not keep them yet is materialized now.
    void this.valueGetter;
    this.oldValues.enable(true);
    const name = this.builder.nameOr(grouped?.name ? { name: grouped.name } : null, 'KTABLE-SELECT-');
    groupBySelect(this.builder, this.nodeName, selector, name);
    return new KGroupedTable<KR, VR>(
      this.builder,
      name,
      grouped?.keySerde ?? null,
      grouped?.valueSerde ?? null,
      grouped?.name ?? null,
    );
  }

  /** The name of the store holding this table, when it is materialized. */
  queryableStoreName(): string | null {
    return this.storeName;
  }

  toStream(named?: Named): KStream<K, V> {
    const name = this.builder.nameOr(named, 'KTABLE-TOSTREAM-');
    this.builder.topology.addProcessor(
      name,
      statelessSupplier<K, Change<V>>((ctx) => (r) => ctx().forward(r.withValue(r.value.newValue))),
      this.nodeName,
    );
    return KStream.fromTable(this, name);
  }

  filter(predicate: (key: K, value: V) => boolean, named?: Named): KTable<K, V> {
    const name = this.builder.nameOr(named, 'KTABLE-FILTER-');
    const keep = (k: K, v: V | null) => (v !== null && predicate(k, v) ? v : null);
    // As Kafka's KTableFilter, decided now (an upstream store the user named) or later by an operation below.
    const parent = this.oldValues;
    let sendOldValues = parent.enable(false);
    this.builder.topology.addProcessor(
      name,
      statelessSupplier<K, Change<V>>((ctx) => (r) => {
        const next = keep(r.key, r.value.newValue);
        // Without old values a dropped record may be one that passed before: a tombstone goes down for it.
        const old = sendOldValues ? keep(r.key, r.value.oldValue) : null;
        if (sendOldValues && next === null && old === null) return;
        ctx().forward(r.withValue(new Change(next, old)));
      }),
      this.nodeName,
    );
    const table = new KTable(this.builder, name, this.keySerde, this.valueSerde, null, null, () =>
      derivedGetter(this.valueGetter, keep),
    );
    table.oldValues = {
      enable(force) {
        if (!sendOldValues && parent.enable(force)) sendOldValues = true;
        return sendOldValues;
      },
    };
    return table;
  }

  filterNot(predicate: (key: K, value: V) => boolean, named?: Named): KTable<K, V> {
    return this.filter((k, v) => !predicate(k, v), named);
  }

  mapValues<V2>(mapper: (value: V, key: K) => V2, named?: Named): KTable<K, V2> {
    const name = this.builder.nameOr(named, 'KTABLE-MAPVALUES-');
    const map = (k: K, v: V | null) => (v === null ? null : mapper(v, k));
    this.builder.topology.addProcessor(
      name,
      statelessSupplier<K, Change<V>>((ctx) => (r) => {
        ctx().forward(r.withValue(new Change(map(r.key, r.value.newValue), map(r.key, r.value.oldValue))));
      }),
      this.nodeName,
    );
    const table = new KTable<K, V2>(this.builder, name, this.keySerde, null, null, null, () =>
      derivedGetter(this.valueGetter, (k, v) => mapper(v, k)),
    );
    // Kafka's KTableMapValues has old values when its parent has them.
    table.oldValues = this.oldValues;
    return table;
  }
}

/**
 * Kafka's count(Materialized) of a grouped stream, and of time and session windows, takes a store name of the
 * counter before its own when the Materialized names no store ("we used to burn a topology name here"); count()
 * without one does not. Later generated names, the store's and its changelog's among them, follow Kafka's.
 */
export function burnCountName(
  b: InternalBuilder,
  materialized: Materialized<unknown, number> | undefined,
): void {
  if (materialized !== undefined && materialized.storeName === null) b.newStoreName('KSTREAM-AGGREGATE-');
}

export class KGroupedStream<K, V> {
  constructor(
    /** @internal */ readonly builder: InternalBuilder,
    /** @internal */ readonly nodeName: string,
    /** @internal */ readonly keySerde: Serde<K> | null,
    /** @internal */ readonly valueSerde: Serde<V> | null,
    /** @internal */ readonly repartitionRequired: boolean,
    /** @internal */ readonly repartitionName: string | null,
  ) {}

  /** The source of the repartition this grouping's aggregations share, once the first one wrote it. */
  private sharedRepartitionSource: string | null = null;

  /**
   * @internal The node an aggregation of this grouping (plain, windowed or session) reads from: the grouped
   * node itself, or the source of a repartition after a key change. As Kafka's GroupedStreamAggregateBuilder, with
   * a Grouped name all the aggregations of one grouped stream read one `<name>-repartition` (a later one still
   * consumes the repartition's three generated names, as Kafka does); without one each writes its own
   * `<store>-repartition`. The repartition carries the Grouped serdes (the grouping's), not the Materialized ones
   * of the store, as Kafka's repartition node.
   */
  aggregationSource(storeName: string): string {
    if (!this.repartitionRequired) return this.nodeName;
    const b = this.builder;
    if (this.sharedRepartitionSource !== null) {
      for (const prefix of ['KSTREAM-SINK-', 'KSTREAM-FILTER-', 'KSTREAM-SOURCE-'])
        b.newProcessorName(prefix);
      return this.sharedRepartitionSource;
    }
    const source = repartitionThrough(
      b,
      this.nodeName,
      this.repartitionName ?? storeName,
      this.keySerde as Serde<unknown> | null,
      this.valueSerde as Serde<unknown> | null,
    );
    if (this.repartitionName !== null) this.sharedRepartitionSource = source;
    return source;
  }

  /** Aggregates per key and time window (tumbling or hopping, with a grace period for late records). */
  windowedBy(windows: TimeWindows): TimeWindowedKStream<K, V>;
  windowedBy(windows: SessionWindows): SessionWindowedKStream<K, V>;
  windowedBy(windows: SlidingWindows): TimeWindowedKStream<K, V>;
  windowedBy(
    windows: TimeWindows | SessionWindows | SlidingWindows,
  ): TimeWindowedKStream<K, V> | SessionWindowedKStream<K, V> {
    if (windows instanceof SessionWindows) return new SessionWindowedKStream(this, windows);
    return new TimeWindowedKStream(this, windows);
  }

  count(materialized?: Materialized<K, number>, named?: Named): KTable<K, number> {
    burnCountName(this.builder, materialized);
    const m = materialized ?? Materialized.with<K, number>(this.keySerde as Serde<K>, Serdes.Long());
    return this.build<number>(
      'KSTREAM-AGGREGATE-',
      m.valueSerde === null ? m.withValueSerde(Serdes.Long()) : m,
      named,
      (_key, _value, old) => (old ?? 0) + 1,
    );
  }

  reduce(reducer: Reducer<V>, materialized?: Materialized<K, V>, named?: Named): KTable<K, V> {
    const m = materialized ?? Materialized.with<K, V>(this.keySerde as Serde<K>, this.valueSerde as Serde<V>);
    return this.build<V>(
      'KSTREAM-REDUCE-',
      m.valueSerde === null && this.valueSerde !== null ? m.withValueSerde(this.valueSerde) : m,
      named,
      (_key, value, old) => (old === null ? value : reducer(old, value)),
    );
  }

  aggregate<VA>(
    initializer: Initializer<VA>,
    aggregator: Aggregator<K, V, VA>,
    materialized?: Materialized<K, VA>,
    named?: Named,
  ): KTable<K, VA> {
    return this.build<VA>(
      'KSTREAM-AGGREGATE-',
      materialized ?? Materialized.with<K, VA>(this.keySerde as Serde<K>, null as unknown as Serde<VA>),
      named,
      (key, value, old) => aggregator(key, value, old ?? initializer()),
    );
  }

  private build<VA>(
    prefix: string,
    m: Materialized<K, VA>,
    named: Named | undefined,
    step: (key: K, value: V, old: VA | null) => VA,
  ): KTable<K, VA> {
    const b = this.builder;
    const storeName = m.storeName ?? b.newStoreName(prefix);
    const name = b.nameOr(named, prefix);
    const keySerde = m.keySerde ?? this.keySerde;
    const parent = this.aggregationSource(storeName);
    const store = new StoreBuilder<K, VA>(storeName, m.engine, keySerde, m.valueSerde, true);
    if (m.loggingEnabled) store.withLoggingEnabled(m.logConfig);
    else store.withLoggingDisabled();
    if (m.cachingEnabled) store.withCachingEnabled();
    b.topology.addProcessor(name, aggregateSupplier<K, V, VA>(storeName, step), parent);
    b.topology.addStateStore(store as StoreBuilder, name);
    return new KTable<K, VA>(b, name, keySerde, m.valueSerde, storeName);
  }
}

/**
 * Adds filter -> sink -> `<prefix>-repartition` -> source below `parent`, as Kafka names them (generated names
 * when the prefix is itself generated), and answers the source's name. `optimizable`: merge.repartition.topics
 * may merge it with the other repartitions of its key-changing node (all but repartition()'s, as in Kafka).
 */
export function repartitionThrough(
  b: InternalBuilder,
  parent: string,
  prefix: string,
  keySerde: Serde<unknown> | null,
  valueSerde: Serde<unknown> | null,
  optimizable = true,
): string {
  const topic = prefix.endsWith(REPARTITION_SUFFIX) ? prefix : prefix + REPARTITION_SUFFIX;
  // Generated even when unused, so that the counter moves as Kafka's does.
  const genSink = b.newProcessorName('KSTREAM-SINK-');
  const genFilter = b.newProcessorName('KSTREAM-FILTER-');
  const genSource = b.newProcessorName('KSTREAM-SOURCE-');
  const generated = /^KSTREAM.*-[0-9]{10}$/.test(prefix);
  const sinkName = generated ? genSink : `${topic}-sink`;
  const filterName = generated ? genFilter : `${topic}-filter`;
  const sourceName = generated ? genSource : `${topic}-source`;
  b.topology.addProcessor(
    filterName,
    statelessSupplier<unknown, unknown>((ctx) => (r) => {
      if (r.key !== null && r.key !== undefined) ctx().forward(r);
    }),
    parent,
  );
  b.topology.addSink(
    { name: sinkName, keySerializer: keySerde ?? undefined, valueSerializer: valueSerde ?? undefined },
    topic,
    filterName,
  );
  b.topology.markInternalTopic(topic);
  b.topology.addSource(
    { name: sourceName, keyDeserializer: keySerde ?? undefined, valueDeserializer: valueSerde ?? undefined },
    topic,
  );
  b.repartitions.push({
    filter: filterName,
    sink: sinkName,
    source: sourceName,
    topic,
    keySerde,
    valueSerde,
    optimizable,
  });
  return sourceName;
}

/**
 * The processor behind count, reduce and aggregate: reads the key's aggregate, folds the record in, writes it
 * back with the larger of the two timestamps (as Kafka since KIP-258) and forwards the change. Records with a
 * null key or value are skipped, as Kafka skips them.
 */
function aggregateSupplier<K, V, VA>(storeName: string, step: (key: K, value: V, old: VA | null) => VA) {
  return (): Processor<K, V, K, Change<VA>> => {
    let context: ProcessorContext<K, Change<VA>>;
    let store: TimestampedStore<K, VA>;
    let cached = false;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<TimestampedStore<K, VA>>(storeName);
        cached = forwardOnCacheFlush(store, c);
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined || r.value === null || r.value === undefined) return;
        const old = store.get(r.key);
        const next = step(r.key, r.value, old?.value ?? null);
        const timestamp = old === null ? r.timestamp : Math.max(old.timestamp, r.timestamp);
        store.put(r.key, { value: next, timestamp });
        if (!cached)
          context.forward(r.withValue(new Change(next, old?.value ?? null)).withTimestamp(timestamp));
      },
    };
  };
}

/**
 * With a record cache, a table's changes go downstream when the cache lets them go (commit or eviction), one
 * per key, rather than on every update. Answers whether the store caches.
 *
 * Each change goes as Kafka's TimestampedCacheFlushListener sends it: with the headers of the record that last
 * wrote the entry, and the new value's timestamp, or for a deletion the deleting record's timestamp.
 */
export function forwardOnCacheFlush<K, V>(
  store: TimestampedStore<K, V>,
  context: ProcessorContext<K, Change<V>>,
): boolean {
  if (!(store instanceof CachingTimestampedStore) || !store.cachingEnabled) return false;
  store.setFlushListener((key, next, old, written) => {
    const change = new Change(next?.value ?? null, old?.value ?? null);
    context.forward(new Record(key, change, next?.timestamp ?? written.timestamp, written.headers));
  });
  return true;
}

/** The processor of builder.table(): keeps the latest value per key and forwards the change. */
export function tableSourceSupplier<K, V>(storeName: string) {
  return (): Processor<K, V, K, Change<V>> => {
    let context: ProcessorContext<K, Change<V>>;
    let store: TimestampedStore<K, V>;
    let cached = false;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<TimestampedStore<K, V>>(storeName);
        cached = forwardOnCacheFlush(store, c);
      },
      process(r: Record<K, V>) {
        if (r.key === null || r.key === undefined) return;
        const old = store.get(r.key);
        const value = r.value ?? null;
        store.put(r.key, value === null ? null : { value, timestamp: r.timestamp });
        if (!cached) context.forward(r.withValue(new Change(value, old?.value ?? null)));
      },
    };
  };
}
