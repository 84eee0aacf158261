// KTable-KTable joins (inner, left, outer) on the key. Each side gets a processor that, on an update of its
// table, reads the other table's current value through its value getter and forwards the joined change (the old
// joined value only once an operation below asks for old values) to a merge node, as Kafka's join processors;
// the result table is materialized in a store when Materialized is given.
// Names are Kafka's: KTABLE-MERGE- first (after the store name when materialized), then KTABLE-JOINTHIS- /
// KTABLE-JOINOTHER- (LEFTTHIS / LEFTOTHER, OUTERTHIS / OUTEROTHER for the outer kinds). Both tables' topics
// must be co-partitioned: the two processors read each other's stores, so they share one sub-topology.

import type { Materialized, Named } from './dsl-options.js';
import { TopologyError } from './errors.js';
import { KTable, type OldValues, storeGetter, type ValueGetterSupplier } from './ktable.js';
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

/**
 * Which of Kafka's join processors a side is: the inner join's (KTableKTableInnerJoin), the left join's left side
 * (KTableKTableLeftJoin) and right side (KTableKTableRightJoin), or an outer join's (KTableKTableOuterJoin).
 */
type SideRule = 'inner' | 'left' | 'right' | 'outer';

/**
 * One side's change joined with the other side's current value as Kafka's processor of `rule` joins it: null when
 * it forwards nothing, else the new and old joined values (the old one only while `sendOldValues`).
 */
function joinChange<K, V, VO, VR>(
  rule: SideRule,
  join: (key: K, mine: V | null, other: VO | null) => VR,
  key: K,
  change: Change<V>,
  other: VO | null,
  sendOldValues: boolean,
): { next: VR | null; old: VR | null } | null {
  const { newValue, oldValue } = change;
  switch (rule) {
    case 'inner':
      if (other === null) return null;
      return {
        next: newValue === null ? null : join(key, newValue, other),
        old: sendOldValues && oldValue !== null ? join(key, oldValue, other) : null,
      };
    case 'left':
      if (other === null && newValue === null && oldValue === null) return null;
      return {
        next: newValue === null ? null : join(key, newValue, other),
        old: sendOldValues && oldValue !== null ? join(key, oldValue, other) : null,
      };
    case 'right':
      if (other === null) return null;
      return { next: join(key, newValue, other), old: sendOldValues ? join(key, oldValue, other) : null };
    case 'outer':
      if (other === null && newValue === null && oldValue === null) return null;
      return {
        next: other !== null || newValue !== null ? join(key, newValue, other) : null,
        old: sendOldValues && (other !== null || oldValue !== null) ? join(key, oldValue, other) : null,
      };
  }
}

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
  rule: SideRule,
  join: (key: K, mine: VIn | null, other: VOther | null) => VR,
  sendOldValues: { on: boolean },
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
        const joined = joinChange(rule, join, r.key, r.value, other?.value ?? null, sendOldValues.on);
        if (joined === null) return;
        const timestamp = other === null ? r.timestamp : Math.max(r.timestamp, other.timestamp);
        context.forward(r.withValue(new Change(joined.next, joined.old)).withTimestamp(timestamp));
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
    throw new TopologyError('a table-table join needs tables whose values can be read');
  const storeName =
    materialized === undefined ? null : (materialized.storeName ?? b.newStoreName('KTABLE-MERGE-'));
  const mergeName = b.nameOr(named, 'KTABLE-MERGE-');
  const [thisPrefix, otherPrefix] = PREFIXES[kind];
  const thisName = named?.name ? `${named.name}-join-this` : b.newProcessorName(thisPrefix);
  const otherName = named?.name ? `${named.name}-join-other` : b.newProcessorName(otherPrefix);
  const t = b.topology;
  // As Kafka's KTableImpl.doJoin: an outer side sends its old values (a delete must be told from a key never
  // held); the join's processors send old values only once an operation below asks, and then both parents do.
  if (kind !== 'inner') left.oldValues.enable(true);
  if (kind === 'outer') right.oldValues.enable(true);
  const sendOldValues = { on: false };
  const enableOldValues: OldValues = {
    enable() {
      if (!sendOldValues.on) {
        sendOldValues.on = true;
        left.oldValues.enable(true);
        right.oldValues.enable(true);
      }
      return true;
    },
  };
  const [thisRule, otherRule]: [SideRule, SideRule] =
    kind === 'inner' ? ['inner', 'inner'] : kind === 'left' ? ['left', 'right'] : ['outer', 'outer'];
  t.addProcessor(
    thisName,
    sideSupplier<K, V, VO, VR>(
      rightGetter,
      thisRule,
      (k, mine, other) => joiner(mine, other, k),
      sendOldValues,
    ),
    left.nodeName,
  );
  t.addProcessor(
    otherName,
    sideSupplier<K, VO, V, VR>(
      leftGetter,
      otherRule,
      (k, mine, other) => joiner(other, mine, k),
      sendOldValues,
    ),
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
    const table = new KTable<K, VR>(b, mergeName, keySerde, valueSerde, storeName);
    table.oldValues = enableOldValues;
    return table;
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
  const table = new KTable<K, VR>(b, mergeName, keySerde, valueSerde, null, null, getter);
  table.oldValues = enableOldValues;
  return table;
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
