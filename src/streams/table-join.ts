// KTable-KTable joins (inner, left, outer) on the key. Each side gets a processor that, on an update of its
// table, reads the other table's current value through its value getter and forwards the joined change (new and
// old joined value) to a merge node; the result table is materialized in a store when Materialized is given.
// Names are Kafka's: KTABLE-MERGE- first (after the store name when materialized), then KTABLE-JOINTHIS- /
// KTABLE-JOINOTHER- (LEFTTHIS / LEFTOTHER, OUTERTHIS / OUTEROTHER for the outer kinds). Both tables' topics
// must be co-partitioned: the two processors read each other's stores, so they share one sub-topology.

import type { Materialized, Named } from './dsl-options.js';
import { TopologyError } from './errors.js';
import { KTable, storeGetter, type ValueGetterSupplier } from './ktable.js';
import { Change, type Processor, type ProcessorContext, type Record } from './processor.js';
import type { TimestampedStore } from './state/store-stack.js';
import { StoreBuilder, type ValueAndTimestamp } from './state/stores.js';

export type TableJoinKind = 'inner' | 'left' | 'outer';

const PREFIXES: { [kind in TableJoinKind]: [string, string] } = {
  inner: ['KTABLE-JOINTHIS-', 'KTABLE-JOINOTHER-'],
  left: ['KTABLE-LEFTTHIS-', 'KTABLE-LEFTOTHER-'],
  outer: ['KTABLE-OUTERTHIS-', 'KTABLE-OUTEROTHER-'],
};

type Joiner<K, V, VO, VR> = (value: V | null, otherValue: VO | null, key: K) => VR;

/** The joined value for one side's value and the other side's, or null when the kind of join emits nothing. */
function joinValue<K, V, VO, VR>(
  kind: TableJoinKind,
  joiner: Joiner<K, V, VO, VR>,
  key: K,
  left: V | null,
  right: VO | null,
): VR | null {
  if (left === null && right === null) return null;
  if (kind === 'inner' && (left === null || right === null)) return null;
  if (kind === 'left' && left === null) return null;
  return joiner(left, right, key);
}

function sideSupplier<K, VIn, VOther, VR>(
  otherGetter: ValueGetterSupplier<K, VOther>,
  join: (key: K, mine: VIn | null, other: VOther | null) => VR | null,
) {
  return (): Processor<K, Change<VIn>, K, Change<VR>> => {
    let context: ProcessorContext<K, Change<VR>>;
    let get: (key: K) => ValueAndTimestamp<VOther> | null;
    return {
      init(c) {
        context = c;
        get = otherGetter.init(c as ProcessorContext<unknown, unknown>);
      },
      process(r: Record<K, Change<VIn>>) {
        if (r.key === null || r.key === undefined) return;
        const other = get(r.key);
        const next = join(r.key, r.value.newValue, other?.value ?? null);
        const old = join(r.key, r.value.oldValue, other?.value ?? null);
        if (next === null && old === null) return;
        const timestamp = other === null ? r.timestamp : Math.max(r.timestamp, other.timestamp);
        context.forward(r.withValue(new Change(next, old)).withTimestamp(timestamp));
      },
    };
  };
}

export function tableTableJoin<K, V, VO, VR>(
  left: KTable<K, V>,
  right: KTable<K, VO>,
  joiner: Joiner<K, V, VO, VR>,
  kind: TableJoinKind,
  named: Named | undefined,
  materialized: Materialized<K, VR> | undefined,
): KTable<K, VR> {
  const b = left.builder;
  const leftGetter = left.valueGetter;
  const rightGetter = right.valueGetter;
  if (leftGetter === null || rightGetter === null)
    throw new TopologyError('a table-table join needs tables whose values can be read (not windowed tables)');
  const storeName =
    materialized === undefined ? null : (materialized.storeName ?? b.newStoreName('KTABLE-MERGE-'));
  const mergeName = b.nameOr(named, 'KTABLE-MERGE-');
  const [thisPrefix, otherPrefix] = PREFIXES[kind];
  const thisName = named?.name ? `${named.name}-join-this` : b.newProcessorName(thisPrefix);
  const otherName = named?.name ? `${named.name}-join-other` : b.newProcessorName(otherPrefix);
  const t = b.topology;
  // Both sides send their old values: Kafka asks this of an outer join's outer sides; Brook's join processors
  // expect old values on every change, so it is asked of both.
  left.oldValues.enable(true);
  right.oldValues.enable(true);
  t.addProcessor(
    thisName,
    sideSupplier<K, V, VO, VR>(rightGetter, (k, mine, other) => joinValue(kind, joiner, k, mine, other)),
    left.nodeName,
  );
  t.addProcessor(
    otherName,
    sideSupplier<K, VO, V, VR>(leftGetter, (k, mine, other) => joinValue(kind, joiner, k, other, mine)),
    right.nodeName,
  );
  t.connectProcessorAndStateStores(thisName, ...rightGetter.stores);
  t.connectProcessorAndStateStores(otherName, ...leftGetter.stores);
  t.markCopartitioned(thisName);
  const keySerde = materialized?.keySerde ?? left.keySerde;
  const valueSerde = materialized?.valueSerde ?? null;
  t.addProcessor(mergeName, mergeSupplier<K, VR>(storeName), thisName, otherName);
  if (storeName !== null && materialized !== undefined) {
    const store = new StoreBuilder<K, VR>(storeName, materialized.engine, keySerde, valueSerde, true);
    if (materialized.loggingEnabled) store.withLoggingEnabled(materialized.logConfig);
    else store.withLoggingDisabled();
    t.addStateStore(store as StoreBuilder, mergeName);
    return new KTable<K, VR>(b, mergeName, keySerde, valueSerde, storeName);
  }
  // Not materialized: readers below compute the join from both sides' getters.
  const getter: ValueGetterSupplier<K, VR> = {
    stores: [...leftGetter.stores, ...rightGetter.stores],
    init(context) {
      const getLeft = leftGetter.init(context);
      const getRight = rightGetter.init(context);
      return (key) => {
        const l = getLeft(key);
        const r = getRight(key);
        const value = joinValue(kind, joiner, key, l?.value ?? null, r?.value ?? null);
        if (value === null) return null;
        return { value, timestamp: Math.max(l?.timestamp ?? -1, r?.timestamp ?? -1) };
      };
    },
  };
  return new KTable<K, VR>(b, mergeName, keySerde, valueSerde, null, null, getter);
}

/** Forwards both sides' changes; with a store, keeps the joined value per key first. */
function mergeSupplier<K, VR>(storeName: string | null) {
  return (): Processor<K, Change<VR>, K, Change<VR>> => {
    let context: ProcessorContext<K, Change<VR>>;
    let store: TimestampedStore<K, VR> | null = null;
    return {
      init(c) {
        context = c;
        if (storeName !== null) store = c.getStateStore<TimestampedStore<K, VR>>(storeName);
      },
      process(r) {
        if (store !== null) {
          const next = r.value.newValue;
          store.put(r.key, next === null ? null : { value: next, timestamp: r.timestamp });
        }
        context.forward(r);
      },
    };
  };
}

export { storeGetter };
