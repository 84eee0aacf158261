// KStream-KStream windowed joins (inner, left, outer), as Kafka builds them: each side's records go through a
// KSTREAM-WINDOWED- processor that keeps them in that side's window store (`KSTREAM-JOINTHIS-<n>-store` and
// `KSTREAM-JOINOTHER-<n>-store`, records kept with duplicates for size + grace), then to that side's join
// processor, which looks up the other side's store for records of the same key within the join window and
// forwards joiner(left, right) with the larger timestamp; a KSTREAM-MERGE- node unites both sides.
//
// Left and outer joins: a record that found no partner waits in a shared store (`KSTREAM-OUTERSHARED-<n>-store`,
// key: timestamp, side, key) until stream time passes its window's end plus grace; then it is emitted with
// null for the missing side, unless a partner arrived meanwhile (which removes it). A record whose window has
// already closed when it arrives is emitted at once. Stream time is the task's: both sides share a task.
// Records with a null value are dropped, and those with a null key too, except on the outer side of a left or
// outer join, which emits them at once with null (Kafka 3.7+, KIP-962).

import type { StreamJoined } from './dsl-options.js';
import type { JoinWindows } from './join-windows.js';
import { KStream } from './kstream.js';
import { repartitionThrough } from './ktable.js';
import type { Processor, ProcessorContext, Record } from './processor.js';
import { type Serde, SerializationError } from './serdes.js';
import type { PlainKeyValueStore } from './state/store-stack.js';
import { StoreBuilder } from './state/stores.js';
import type { DuplicatesWindowStore } from './state/window-store.js';

export type StreamJoiner<K, V, VO, VR> = (value: V | null, otherValue: VO | null, key: K) => VR;

/** A record waiting for a partner in the outer-join store. */
interface OuterKey<K> {
  timestamp: number;
  leftSide: boolean;
  key: K;
}

/** Kafka's TimestampedKeyAndJoinSide bytes: 8-byte timestamp, 1 byte side (1 = left), then the key. */
function outerKeySerde<K>(inner: Serde<K>): Serde<OuterKey<K>> {
  return {
    serialize(topic, data) {
      if (data === null || data === undefined) return null;
      const key = inner.serialize(topic, data.key);
      if (key === null) throw new SerializationError('a join key may not be null');
      const out = Buffer.allocUnsafe(9 + key.length);
      out.writeBigInt64BE(BigInt(data.timestamp), 0);
      out.writeUInt8(data.leftSide ? 1 : 0, 8);
      key.copy(out, 9);
      return out;
    },
    deserialize(topic, data) {
      if (data === null || data === undefined) return null;
      return {
        timestamp: Number(data.readBigInt64BE(0)),
        leftSide: data.readUInt8(8) === 1,
        key: inner.deserialize(topic, data.subarray(9)) as K,
      };
    },
  };
}

/** Kafka's LeftOrRightValue bytes: 1 byte side (1 = left), then the value of that side. */
function outerValueSerde(
  left: Serde<unknown>,
  right: Serde<unknown>,
): Serde<{ leftSide: boolean; value: unknown }> {
  return {
    serialize(topic, data) {
      if (data === null || data === undefined) return null;
      const value = (data.leftSide ? left : right).serialize(topic, data.value) ?? Buffer.alloc(0);
      return Buffer.concat([Buffer.from([data.leftSide ? 1 : 0]), value]);
    },
    deserialize(topic, data) {
      if (data === null || data === undefined) return null;
      const leftSide = data.readUInt8(0) === 1;
      return { leftSide, value: (leftSide ? left : right).deserialize(topic, data.subarray(1)) };
    },
  };
}

/** One task's outer-join bookkeeping, shared by its two join processors through the store they share. */
const outerDue = new WeakMap<object, { nextDueMs: number }>();

export function streamStreamJoin<K, V, VO, VR>(
  left: KStream<K, V>,
  right: KStream<K, VO>,
  joiner: StreamJoiner<K, V, VO, VR>,
  windows: JoinWindows,
  joined: StreamJoined<K, V, VO> | undefined,
  leftOuter: boolean,
  rightOuter: boolean,
): KStream<K, VR> {
  const b = left.builder;
  const t = b.topology;
  const name = joined?.name ?? null;
  const keySerde = joined?.keySerde ?? left.keySerde ?? right.keySerde;
  const valueSerde = joined?.valueSerde ?? left.valueSerde;
  const otherValueSerde = joined?.otherValueSerde ?? right.valueSerde;
  let leftNode = left.nodeName;
  let rightNode = right.nodeName;
  if (left.repartitionRequired)
    leftNode = repartitionThrough(
      b,
      left.nodeName,
      name === null ? left.nodeName : `${name}-left`,
      keySerde as Serde<unknown> | null,
      valueSerde as Serde<unknown> | null,
    );
  if (right.repartitionRequired)
    rightNode = repartitionThrough(
      b,
      right.nodeName,
      name === null ? right.nodeName : `${name}-right`,
      keySerde as Serde<unknown> | null,
      otherValueSerde as Serde<unknown> | null,
    );
  const thisWindowedName = name === null ? b.newProcessorName('KSTREAM-WINDOWED-') : `${name}-this-windowed`;
  const otherWindowedName =
    name === null ? b.newProcessorName('KSTREAM-WINDOWED-') : `${name}-other-windowed`;
  const thisGenerated = b.newProcessorName(rightOuter ? 'KSTREAM-OUTERTHIS-' : 'KSTREAM-JOINTHIS-');
  const otherGenerated = b.newProcessorName(leftOuter ? 'KSTREAM-OUTEROTHER-' : 'KSTREAM-JOINOTHER-');
  const thisName = name === null ? thisGenerated : `${name}-join-this`;
  const otherName = name === null ? otherGenerated : `${name}-join-other`;
  const mergeName = name === null ? b.newProcessorName('KSTREAM-MERGE-') : `${name}-merge`;

  const base = joined?.storeName ?? null;
  const thisStoreName = `${base === null ? thisGenerated : base + (rightOuter ? '-outer-this-join' : '-this-join')}-store`;
  const otherStoreName = `${base === null ? otherGenerated : base + (leftOuter ? '-outer-other-join' : '-other-join')}-store`;
  const sharedStoreName = leftOuter
    ? `${base === null ? thisGenerated.replace(/^KSTREAM-(JOIN|OUTER)THIS-/, 'KSTREAM-OUTERSHARED-') : base + (rightOuter ? '-outer-shared-join' : '-left-shared-join')}-store`
    : null;

  const retentionMs = windows.size() + windows.graceMs;
  const windowStore = <VS>(storeName: string, vs: Serde<VS> | null) => {
    const store = new StoreBuilder<K, VS>(storeName, 'persistent', keySerde, vs, false);
    store.window = { sizeMs: windows.size(), retentionMs, retainDuplicates: true };
    // Records kept with duplicates cannot be compacted: the changelog is deleted by time (Kafka's config).
    if (joined?.loggingEnabled === false) store.withLoggingDisabled();
    else
      store.withLoggingEnabled({
        'cleanup.policy': 'delete',
        ...joined?.logConfig,
      });
    return store as StoreBuilder;
  };

  t.addProcessor(thisWindowedName, windowedSupplier<K, V>(thisStoreName), leftNode);
  t.addProcessor(otherWindowedName, windowedSupplier<K, VO>(otherStoreName), rightNode);
  const sides = { windows, joiner, leftOuter, rightOuter, sharedStoreName };
  t.addProcessor(
    thisName,
    joinSideSupplier<K, V, VO, VR>({ ...sides, leftSide: true, otherStoreName }),
    thisWindowedName,
  );
  t.addProcessor(
    otherName,
    joinSideSupplier<K, VO, V, VR>({
      ...sides,
      joiner: (v, vo, k) => joiner(vo, v, k),
      leftSide: false,
      otherStoreName: thisStoreName,
    }),
    otherWindowedName,
  );
  t.addProcessor(mergeName, passThrough, thisName, otherName);
  t.addStateStore(windowStore(thisStoreName, valueSerde), thisWindowedName, otherName);
  t.addStateStore(windowStore(otherStoreName, otherValueSerde), otherWindowedName, thisName);
  if (sharedStoreName !== null) {
    const shared = new StoreBuilder(sharedStoreName, 'persistent', null, null, false);
    shared.serdesFrom = (defaultKey, defaultValue) => ({
      key: outerKeySerde((keySerde ?? defaultKey) as Serde<unknown>) as Serde<unknown>,
      value: outerValueSerde(
        (valueSerde ?? defaultValue) as Serde<unknown>,
        (otherValueSerde ?? defaultValue) as Serde<unknown>,
      ) as Serde<unknown>,
    });
    if (joined?.loggingEnabled === false) shared.withLoggingDisabled();
    else shared.withLoggingEnabled({ ...joined?.logConfig });
    t.addStateStore(shared, thisName, otherName);
  }
  t.markCopartitioned(thisName);
  return new KStream<K, VR>(b, mergeName, keySerde, null, false);
}

const passThrough = (): Processor<unknown, unknown, unknown, unknown> => {
  let context: ProcessorContext<unknown, unknown>;
  return {
    init(c) {
      context = c;
    },
    process(r) {
      context.forward(r);
    },
  };
};

/** Keeps each record of its side in the side's window store, then passes it on (Kafka's KStreamJoinWindow). */
function windowedSupplier<K, V>(storeName: string) {
  return (): Processor<K, V, K, V> => {
    let context: ProcessorContext<K, V>;
    let store: DuplicatesWindowStore<K, V>;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<DuplicatesWindowStore<K, V>>(storeName);
      },
      process(r) {
        if (r.key !== null && r.key !== undefined && r.value !== null && r.value !== undefined)
          store.put(r.key, r.value, r.timestamp);
        context.forward(r);
      },
    };
  };
}

interface SideOptions<K, V, VO, VR> {
  windows: JoinWindows;
  /** Called as (this side's value, the other side's value, key). */
  joiner: StreamJoiner<K, V, VO, VR>;
  leftOuter: boolean;
  rightOuter: boolean;
  leftSide: boolean;
  otherStoreName: string;
  sharedStoreName: string | null;
}

function joinSideSupplier<K, V, VO, VR>(o: SideOptions<K, V, VO, VR>) {
  const w = o.windows;
  // How far before and after this side's record the other side's records may be.
  const beforeMs = o.leftSide ? w.beforeMs : w.afterMs;
  const afterMs = o.leftSide ? w.afterMs : w.beforeMs;
  const thisOuter = o.leftSide ? o.leftOuter : o.rightOuter;
  /** When a waiting record of a side may no longer find a partner: its time + the other side's reach + grace. */
  const dueOf = (timestamp: number, leftSide: boolean) =>
    timestamp + (leftSide ? w.afterMs : w.beforeMs) + w.graceMs;
  type Waiting = { leftSide: boolean; value: unknown };
  return (): Processor<K, V, K, VR> => {
    let context: ProcessorContext<K, VR>;
    let other: DuplicatesWindowStore<K, VO>;
    let shared: PlainKeyValueStore<OuterKey<K>, Waiting> | null = null;
    let due: { nextDueMs: number } = { nextDueMs: Number.NEGATIVE_INFINITY };
    const emitClosed = (streamTimeMs: number) => {
      if (shared === null || due.nextDueMs >= streamTimeMs) return;
      let next = Number.POSITIVE_INFINITY;
      for (const e of shared.all()) {
        const at = dueOf(e.key.timestamp, e.key.leftSide);
        if (at >= streamTimeMs) {
          next = Math.min(next, at);
          // Entries are in timestamp order: once even the shorter reach is not over, none after this one is.
          const earliest = e.key.timestamp + Math.min(w.afterMs, w.beforeMs) + w.graceMs;
          if (earliest >= streamTimeMs) {
            next = Math.min(next, earliest);
            break;
          }
          continue;
        }
        shared.delete(e.key);
        // The joiner of this processor takes (this side, other side); a waiting record may be of either side.
        const value = e.value.value;
        const result =
          e.key.leftSide === o.leftSide
            ? o.joiner(value as V, null, e.key.key)
            : o.joiner(null, value as VO, e.key.key);
        context.forward(recordOf(e.key.key, result, e.key.timestamp));
      }
      due.nextDueMs = next;
    };
    let recordOf: (key: K, value: VR, timestamp: number) => Record<K, VR>;
    return {
      init(c) {
        context = c;
        other = c.getStateStore<DuplicatesWindowStore<K, VO>>(o.otherStoreName);
        if (o.sharedStoreName !== null) {
          const store = c.getStateStore<PlainKeyValueStore<OuterKey<K>, Waiting>>(o.sharedStoreName);
          shared = store;
          let d = outerDue.get(store);
          if (d === undefined) outerDue.set(store, (d = { nextDueMs: Number.NEGATIVE_INFINITY }));
          due = d;
        }
      },
      process(r) {
        recordOf = (key, value, timestamp) => r.withKey(key).withValue(value).withTimestamp(timestamp);
        if (r.value === null || r.value === undefined) return;
        if (r.key === null || r.key === undefined) {
          // A record without a key can have no partner; the outer side of a left or outer join emits it at once,
          // joined with null, as Kafka's KStreamKStreamJoin does since 3.7 (KIP-962); an inner side drops it.
          if (thisOuter) context.forward(r.withValue(o.joiner(r.value, null, r.key)));
          return;
        }
        const streamTimeMs = context.currentStreamTimeMs();
        emitClosed(streamTimeMs);
        const ts = r.timestamp;
        let matched = false;
        for (const m of other.fetch(r.key, ts - beforeMs, ts + afterMs)) {
          matched = true;
          // A partner that was waiting in the outer store has found this record: it is no longer unmatched.
          shared?.delete({ timestamp: m.timestamp, leftSide: !o.leftSide, key: r.key });
          context.forward(
            r.withValue(o.joiner(r.value, m.value, r.key)).withTimestamp(Math.max(ts, m.timestamp)),
          );
        }
        if (matched || !thisOuter) return;
        const dueMs = dueOf(ts, o.leftSide);
        if (shared === null || dueMs < streamTimeMs) {
          context.forward(r.withValue(o.joiner(r.value, null, r.key)));
          return;
        }
        shared.put(
          { timestamp: ts, leftSide: o.leftSide, key: r.key },
          { leftSide: o.leftSide, value: r.value },
        );
        due.nextDueMs = Math.min(due.nextDueMs, dueMs);
      },
    };
  };
}
