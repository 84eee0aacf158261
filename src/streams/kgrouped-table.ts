// KGroupedTable: a table regrouped by a new key (KTable.groupBy), ready for count, reduce and aggregate with an
// adder and a subtractor, as Kafka's KGroupedTableImpl.
//
// A table update moves a row from one group to another, so the KTABLE-SELECT node maps both the old and the new
// value of each change: the old pair goes out as Change(null, old) under the old group's key (to be subtracted),
// then the new pair as Change(new, null) under the new key (to be added); when both map to the same key, one
// record carries Change(new, old), so the subtraction and the addition happen together (Kafka 3.5, KIP-904).
// The changes travel through `<Grouped name or store name>-repartition` in Kafka's ChangedSerializer format
// (changedSerde below), and the aggregate node folds them into a timestamped store: subtract the old value from
// the group's aggregate when there is one, then add the new value (from the initializer when the group is new).
// Aggregates are kept even when the subtractor brings them back to their initial value, as in Kafka.

import assert from 'node:assert/strict';
import { Materialized, type Named } from './dsl-options.js';
import type { InternalBuilder } from './internal-builder.js';
import type { KeyValue } from './key-value.js';
import { statelessSupplier } from './kstream.js';
import { type Aggregator, forwardOnCacheFlush, type Initializer, KTable, type Reducer } from './ktable.js';
import { Change, type Processor, type ProcessorContext, Record } from './processor.js';
import { type Serde, Serdes, SerializationError } from './serdes.js';
import type { TimestampedStore } from './state/store-stack.js';
import { StoreBuilder } from './state/stores.js';

const FLAG_OLD = 0;
const FLAG_NEW = 1;
const FLAG_BOTH = 2;

/**
 * Kafka's ChangedSerializer / ChangedDeserializer (3.5 and later): `old, 0`; `new, 1`; or
 * `uint32 newLength, new, old, 2`. The inner serde is the grouped value serde, or the application's default,
 * resolved by the task (`resolveDefault`).
 */
export class ChangedSerde<V> implements Serde<Change<V>> {
  constructor(readonly inner: Serde<V> | null) {}

  /** The same format over `fallback` when no inner serde was given. */
  resolveDefault(fallback: Serde<unknown>): ChangedSerde<V> {
    return this.inner === null ? new ChangedSerde(fallback as Serde<V>) : this;
  }

  private get serde(): Serde<V> {
    assert.ok(this.inner, 'a ChangedSerde is resolved against the default serde before use');
    return this.inner;
  }

  serialize(topic: string, change: Change<V> | null): Buffer | null {
    if (change === null) return null;
    const next = change.newValue === null ? null : this.serde.serialize(topic, change.newValue);
    const old = change.oldValue === null ? null : this.serde.serialize(topic, change.oldValue);
    if (next !== null && old !== null) {
      const out = Buffer.allocUnsafe(4 + next.length + old.length + 1);
      out.writeUInt32BE(next.length, 0);
      next.copy(out, 4);
      old.copy(out, 4 + next.length);
      out[out.length - 1] = FLAG_BOTH;
      return out;
    }
    if (next !== null) return Buffer.concat([next, Buffer.from([FLAG_NEW])]);
    if (old !== null) return Buffer.concat([old, Buffer.from([FLAG_OLD])]);
    return null;
  }

  deserialize(topic: string, bytes: Buffer | null): Change<V> | null {
    if (bytes === null) return null;
    if (bytes.length < 1) throw new SerializationError('a Change value needs at least its flag byte');
    const flag = bytes[bytes.length - 1];
    const body = bytes.subarray(0, bytes.length - 1);
    if (flag === FLAG_OLD) return new Change<V>(null, this.serde.deserialize(topic, body));
    if (flag === FLAG_NEW) return new Change<V>(this.serde.deserialize(topic, body), null);
    if (flag === FLAG_BOTH) {
      if (body.length < 4) throw new SerializationError('a Change value with both values lacks its length');
      const newLength = body.readUInt32BE(0);
      if (4 + newLength > body.length)
        throw new SerializationError(
          `a Change value's new length ${newLength} overruns its ${body.length} bytes`,
        );
      return new Change<V>(
        this.serde.deserialize(topic, body.subarray(4, 4 + newLength)),
        this.serde.deserialize(topic, body.subarray(4 + newLength)),
      );
    }
    throw new SerializationError(`unknown Change flag ${flag}`);
  }
}

/** A serializer that defers to the application's default (a ChangedSerde without an inner serde). */
export function resolveSerde<S>(serde: S | null | undefined, fallback: Serde<unknown>): S | Serde<unknown> {
  if (serde instanceof ChangedSerde) return serde.resolveDefault(fallback);
  return serde ?? fallback;
}

function sameKey(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return Object.is(a, b);
}

/** The KTABLE-SELECT node: maps both sides of each change to their groups (Kafka's KTableRepartitionMap). */
export function groupBySelect<K, V, KR, VR>(
  builder: InternalBuilder,
  parent: string,
  selector: (key: K, value: V) => KeyValue<KR, VR>,
  name: string,
): void {
  builder.topology.addProcessor(
    name,
    statelessSupplier<K, Change<V>>((ctx) => (r) => {
      const next = r.value.newValue === null ? null : selector(r.key, r.value.newValue);
      const old = r.value.oldValue === null ? null : selector(r.key, r.value.oldValue);
      // A row mapped to a null key belongs to no group (it could reach no partition).
      const nextPair = next === null || next.key === null || next.key === undefined ? null : next;
      const oldPair = old === null || old.key === null || old.key === undefined ? null : old;
      if (nextPair !== null && oldPair !== null && sameKey(nextPair.key, oldPair.key)) {
        ctx().forward(
          new Record(nextPair.key, new Change(nextPair.value, oldPair.value), r.timestamp, r.headers),
        );
        return;
      }
      if (oldPair !== null)
        ctx().forward(new Record(oldPair.key, new Change<VR>(null, oldPair.value), r.timestamp, r.headers));
      if (nextPair !== null)
        ctx().forward(new Record(nextPair.key, new Change<VR>(nextPair.value, null), r.timestamp, r.headers));
    }),
    parent,
  );
}

export class KGroupedTable<K, V> {
  /** With a Grouped name, the aggregations share one repartition topic and its source node (as in Kafka). */
  private sharedSource: string | null = null;

  constructor(
    /** @internal */ readonly builder: InternalBuilder,
    /** @internal */ readonly nodeName: string,
    /** @internal */ readonly keySerde: Serde<K> | null,
    /** @internal */ readonly valueSerde: Serde<V> | null,
    /** @internal the Grouped name: the repartition topic's base */ readonly repartitionName: string | null,
  ) {}

  /** Rows per group: +1 for a row that enters, -1 for one that leaves. */
  count(materialized?: Materialized<K, number>, named?: Named): KTable<K, number> {
    const m = materialized ?? Materialized.with<K, number>(this.keySerde as Serde<K>, Serdes.Long());
    return this.build<number>(
      'KTABLE-AGGREGATE-',
      m.valueSerde === null ? m.withValueSerde(Serdes.Long()) : m,
      named,
      () => 0,
      (_k, _v, agg) => agg + 1,
      (_k, _v, agg) => agg - 1,
    );
  }

  /** The adder folds a row's value in; the subtractor takes a leaving row's value out. */
  reduce(
    adder: Reducer<V>,
    subtractor: Reducer<V>,
    materialized?: Materialized<K, V>,
    named?: Named,
  ): KTable<K, V> {
    const m = materialized ?? Materialized.with<K, V>(this.keySerde as Serde<K>, this.valueSerde as Serde<V>);
    return this.build<V>(
      'KTABLE-REDUCE-',
      m.valueSerde === null && this.valueSerde !== null ? m.withValueSerde(this.valueSerde) : m,
      named,
      null,
      (_k, v, agg) => adder(agg, v),
      (_k, v, agg) => subtractor(agg, v),
    );
  }

  aggregate<VA>(
    initializer: Initializer<VA>,
    adder: Aggregator<K, V, VA>,
    subtractor: Aggregator<K, V, VA>,
    materialized?: Materialized<K, VA>,
    named?: Named,
  ): KTable<K, VA> {
    return this.build<VA>(
      'KTABLE-AGGREGATE-',
      materialized ?? Materialized.with<K, VA>(this.keySerde as Serde<K>, null as unknown as Serde<VA>),
      named,
      initializer,
      adder,
      subtractor,
    );
  }

  private build<VA>(
    prefix: string,
    m: Materialized<K, VA>,
    named: Named | undefined,
    initializer: Initializer<VA> | null,
    adder: Aggregator<K, V, VA>,
    subtractor: Aggregator<K, V, VA>,
  ): KTable<K, VA> {
    const b = this.builder;
    // Kafka's order: the store name, then the sink, the source and the aggregate node.
    const storeName = m.storeName ?? b.newStoreName(prefix);
    const sinkName = named?.name ? `${named.name}-sink` : b.newProcessorName('KSTREAM-SINK-');
    const sourceName = named?.name ? `${named.name}-source` : b.newProcessorName('KSTREAM-SOURCE-');
    const name = b.nameOr(named, prefix);
    const topic = `${this.repartitionName ?? storeName}-repartition`;
    const keySerde = m.keySerde ?? this.keySerde;
    const changed = new ChangedSerde<V>(this.valueSerde);
    // As Kafka's KGroupedTableImpl: the repartition carries the Grouped serdes, the store the Materialized ones.
    const source =
      this.sharedSource ?? this.addRepartition(sinkName, sourceName, topic, this.keySerde, changed);
    if (this.repartitionName !== null) this.sharedSource = source;
    const store = new StoreBuilder<K, VA>(storeName, m.engine, keySerde, m.valueSerde, true);
    if (m.loggingEnabled) store.withLoggingEnabled(m.logConfig);
    else store.withLoggingDisabled();
    if (m.cachingEnabled) store.withCachingEnabled();
    b.topology.addProcessor(name, tableAggregateSupplier(storeName, initializer, adder, subtractor), source);
    b.topology.addStateStore(store as StoreBuilder, name);
    return new KTable<K, VA>(b, name, keySerde, m.valueSerde, storeName);
  }

  private addRepartition(
    sinkName: string,
    sourceName: string,
    topic: string,
    keySerde: Serde<K> | null,
    changed: ChangedSerde<V>,
  ): string {
    const b = this.builder;
    b.topology.addSink(
      {
        name: sinkName,
        keySerializer: (keySerde ?? undefined) as Serde<unknown> | undefined,
        valueSerializer: changed as Serde<unknown>,
      },
      topic,
      this.nodeName,
    );
    b.topology.markInternalTopic(topic);
    b.topology.addSource(
      {
        name: sourceName,
        keyDeserializer: (keySerde ?? undefined) as Serde<unknown> | undefined,
        valueDeserializer: changed as Serde<unknown>,
      },
      topic,
    );
    return sourceName;
  }
}

/**
 * Kafka's KTableAggregate and KTableReduce: subtract the old value from the group's aggregate (when both exist),
 * then add the new value, starting from the initializer (or, for reduce, from the value itself) when the group
 * has no aggregate; the result takes the larger timestamp and goes downstream as Change(new, old aggregate).
 */
function tableAggregateSupplier<K, V, VA>(
  storeName: string,
  initializer: Initializer<VA> | null,
  adder: Aggregator<K, V, VA>,
  subtractor: Aggregator<K, V, VA>,
) {
  return (): Processor<K, Change<V>, K, Change<VA>> => {
    let context: ProcessorContext<K, Change<VA>>;
    let store: TimestampedStore<K, VA>;
    let cached = false;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<TimestampedStore<K, VA>>(storeName);
        cached = forwardOnCacheFlush(store, c);
      },
      process(r: Record<K, Change<V>>) {
        if (r.key === null || r.key === undefined || r.value === null) return;
        const old = store.get(r.key);
        let agg: VA | null = old?.value ?? null;
        let timestamp = r.timestamp;
        if (r.value.oldValue !== null && agg !== null) {
          agg = subtractor(r.key, r.value.oldValue, agg);
          timestamp = Math.max(timestamp, old!.timestamp);
        }
        if (r.value.newValue !== null) {
          if (agg === null && initializer === null) agg = r.value.newValue as unknown as VA;
          else {
            agg = adder(r.key, r.value.newValue, agg ?? (initializer as Initializer<VA>)());
            if (old !== null) timestamp = Math.max(timestamp, old.timestamp);
          }
        }
        store.put(r.key, agg === null ? null : { value: agg, timestamp });
        if (!cached)
          context.forward(r.withValue(new Change(agg, old?.value ?? null)).withTimestamp(timestamp));
      },
    };
  };
}
