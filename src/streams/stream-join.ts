// KStream-KStream windowed joins (inner, left, outer), as Kafka builds them: each side's records go through a
// KSTREAM-WINDOWED- processor that keeps them in that side's window store (`KSTREAM-JOINTHIS-<n>-store` and
// `KSTREAM-JOINOTHER-<n>-store`, records kept with duplicates for size + grace), then to that side's join
// processor, which looks up the other side's store for records of the same key within the join window and
// forwards joiner(left, right) with the larger timestamp; a KSTREAM-MERGE- node unites both sides.
//
// Left and outer joins: a record that found no partner waits in a shared store (`KSTREAM-OUTERSHARED-<n>-store`,
// key: timestamp, side, key; value: the list of records alike in all three) until the join's time passes its
// window's end plus grace; then each is emitted with null for the missing side, unless a partner arrived meanwhile
// (which removes the key's list, as Kafka). A record whose window (grace left out, as Kafka) ended before the
// join's time when it arrives is emitted at once. The time that closes windows is the join's own, per task (Kafka's
// KStreamImplJoin.TimeTracker): the largest timestamp of the records that reached either join processor; a record
// the task drops before the join (a filter, another branch of the task) does not advance it.
// Records with a null value are dropped, and those with a null key too, except on the outer side of a left or
// outer join, which emits them at once with null (Kafka 3.7+, KIP-962).

import type { StreamJoined } from './dsl-options.js';
import type { JoinWindows } from './join-windows.js';
import { KStream } from './kstream.js';
import { repartitionThrough } from './ktable.js';
import type { Processor, ProcessorContext, ProcessorSupplier, Record } from './processor.js';
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

type Waiting = { leftSide: boolean; value: unknown };

/**
 * The outer-join store's value: every record waiting under one (timestamp, side, key), in arrival order, so that
 * records alike in all three are each emitted (Kafka's ListValueStore). Bytes: Kafka's ListSerde of byte arrays
 * (1 byte strategy, 1 = variable size; int32 count; per entry int32 length and Kafka's LeftOrRightValue bytes:
 * 1 byte side, 1 = left, then the value of that side). The changelog carries the whole list, so a compacted
 * changelog still restores every entry (Kafka logs each appended value alone).
 */
function outerValuesSerde(left: Serde<unknown>, right: Serde<unknown>): Serde<Waiting[]> {
  return {
    serialize(topic, data) {
      if (data === null || data === undefined) return null;
      const parts: Buffer[] = [Buffer.from([1]), Buffer.alloc(4)];
      parts[1]!.writeInt32BE(data.length, 0);
      for (const w of data) {
        const value = (w.leftSide ? left : right).serialize(topic, w.value) ?? Buffer.alloc(0);
        const header = Buffer.allocUnsafe(5);
        header.writeInt32BE(1 + value.length, 0);
        header.writeUInt8(w.leftSide ? 1 : 0, 4);
        parts.push(header, value);
      }
      return Buffer.concat(parts);
    },
    deserialize(topic, data) {
      if (data === null || data === undefined) return null;
      const out: Waiting[] = [];
      const count = data.readInt32BE(1);
      for (let i = 0, at = 5; i < count; i++) {
        const length = data.readInt32BE(at);
        const leftSide = data.readUInt8(at + 4) === 1;
        const value = data.subarray(at + 5, at + 4 + length);
        out.push({ leftSide, value: (leftSide ? left : right).deserialize(topic, value) });
        at += 4 + length;
      }
      return out;
    },
  };
}

/**
 * One task's time of one join, shared by the join's two processors (Kafka's KStreamImplJoin.TimeTracker): advanced
 * by every record that reaches either of them, and by nothing else the task reads.
 */
class JoinTime {
  /** The largest timestamp seen by the join (-1 before the first). */
  streamTimeMs = -1;
  /** A lower bound of the waiting records' timestamps, so a scan is skipped while none can be due; null: unknown. */
  minWaitingMs: number | null = null;
  /** The wall-clock time before which the waiting records are not scanned again (0: scan at the first chance). */
  nextScanWallMs = 0;

  advance(timestampMs: number): void {
    if (timestampMs > this.streamTimeMs) this.streamTimeMs = timestampMs;
  }

  noteWaiting(timestampMs: number): void {
    if (this.minWaitingMs !== null) this.minWaitingMs = Math.min(this.minWaitingMs, timestampMs);
  }
}

/** The join times of one join, by task id; a task's entry is made by its first join processor, dropped on close. */
class JoinTimes {
  private readonly byTask = new Map<string, JoinTime>();

  of(taskId: string): JoinTime {
    let time = this.byTask.get(taskId);
    if (time === undefined) this.byTask.set(taskId, (time = new JoinTime()));
    return time;
  }

  remove(taskId: string): void {
    this.byTask.delete(taskId);
  }
}

/** Kafka's internal property: the least wall-clock time between two scans of the outer-join store. */
export const OUTER_JOIN_EMIT_INTERVAL_CONFIG =
  '__emit.interval.ms.kstreams.outer.join.spurious.results.fix__';

/** The scan interval the application set (a number, or a string of one, as Kafka's InternalConfig.getLong). */
function outerJoinEmitIntervalMs(configs: { readonly [key: string]: unknown }): number {
  const raw = configs[OUTER_JOIN_EMIT_INTERVAL_CONFIG];
  const ms = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isFinite(ms) ? ms : 1000;
}

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
  // The stores and the result take the StreamJoined serdes alone (null: the default serde), not the streams' own,
  // as Kafka's KStreamImplJoin (StreamJoinedStoreFactory, the merge node's KStreamImpl).
  const keySerde = joined?.keySerde ?? null;
  const valueSerde = joined?.valueSerde ?? null;
  const otherValueSerde = joined?.otherValueSerde ?? null;
  let leftNode = left.nodeName;
  let rightNode = right.nodeName;
  // Each side is repartitioned in the StreamJoined serdes, else its own (null: the default serde), never the other
  // side's, as Kafka's KStreamImpl.repartitionForJoin.
  if (left.repartitionRequired)
    leftNode = repartitionThrough(
      b,
      left.nodeName,
      name === null ? left.nodeName : `${name}-left`,
      (keySerde ?? left.keySerde) as Serde<unknown> | null,
      (valueSerde ?? left.valueSerde) as Serde<unknown> | null,
    );
  if (right.repartitionRequired)
    rightNode = repartitionThrough(
      b,
      right.nodeName,
      name === null ? right.nodeName : `${name}-right`,
      (keySerde ?? right.keySerde) as Serde<unknown> | null,
      (otherValueSerde ?? right.valueSerde) as Serde<unknown> | null,
    );
  // Kafka's NamedInternal.suffixWithOrElseGet: a StreamJoined name still takes the generated name's number.
  const named = (suffix: string, prefix: string) => {
    const generated = b.newProcessorName(prefix);
    return name === null ? generated : `${name}${suffix}`;
  };
  const thisWindowedName = named('-this-windowed', 'KSTREAM-WINDOWED-');
  const otherWindowedName = named('-other-windowed', 'KSTREAM-WINDOWED-');
  const thisGenerated = b.newProcessorName(rightOuter ? 'KSTREAM-OUTERTHIS-' : 'KSTREAM-JOINTHIS-');
  const otherGenerated = b.newProcessorName(leftOuter ? 'KSTREAM-OUTEROTHER-' : 'KSTREAM-JOINOTHER-');
  const thisName = name === null ? thisGenerated : `${name}${rightOuter ? '-outer-this-join' : '-this-join'}`;
  const otherName =
    name === null ? otherGenerated : `${name}${leftOuter ? '-outer-other-join' : '-other-join'}`;
  const mergeName = named('-merge', 'KSTREAM-MERGE-');

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
  const sides = { windows, joiner, leftOuter, rightOuter, sharedStoreName, times: new JoinTimes() };
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
      value: outerValuesSerde(
        (valueSerde ?? defaultValue) as Serde<unknown>,
        (otherValueSerde ?? defaultValue) as Serde<unknown>,
      ) as Serde<unknown>,
    });
    if (joined?.loggingEnabled === false) shared.withLoggingDisabled();
    else shared.withLoggingEnabled({ ...joined?.logConfig });
    t.addStateStore(shared, thisName, otherName);
  }
  t.markCopartitioned(thisName);
  b.streamJoins.push({
    thisWindowed: thisWindowedName,
    otherWindowed: otherWindowedName,
    thisJoin: thisName,
    otherJoin: otherName,
    merge: mergeName,
    thisStore: thisStoreName,
    otherStore: otherStoreName,
    sharedStore: sharedStoreName,
    selfJoin: selfJoinSupplier<K, V, VR>(
      thisStoreName,
      windows,
      joiner as unknown as StreamJoiner<K, V, V, VR>,
    ) as ProcessorSupplier<unknown, unknown, unknown, unknown>,
  });
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

/**
 * Passes each record of its side on, then keeps it in the side's window store (Kafka's KStreamJoinWindow, in its
 * order: a self-join's processor, below this node, must not find the record itself in the store).
 */
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
        context.forward(r);
        if (r.key !== null && r.key !== undefined && r.value !== null && r.value !== undefined)
          store.put(r.key, r.value, r.timestamp);
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
  /** Shared by both sides' processors. */
  times: JoinTimes;
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
  return (): Processor<K, V, K, VR> => {
    let context: ProcessorContext<K, VR>;
    let other: DuplicatesWindowStore<K, VO>;
    let shared: PlainKeyValueStore<OuterKey<K>, Waiting[]> | null = null;
    let time: JoinTime;
    let emitIntervalMs: number;
    let recordOf: (key: K, value: VR, timestamp: number) => Record<K, VR>;

    /** Emits, joined with null, the waiting records whose windows the join's time has closed. */
    const emitClosed = (store: PlainKeyValueStore<OuterKey<K>, Waiting[]>) => {
      const nowMs = time.streamTimeMs;
      if (time.minWaitingMs !== null && time.minWaitingMs + afterMs + w.graceMs >= nowMs) return;
      // At most one scan per interval of wall-clock time (the scan reads the whole store), as Kafka throttles it:
      // records due meanwhile wait for the first record after the interval.
      const wallMs = context.currentSystemTimeMs();
      if (wallMs < time.nextScanWallMs) return;
      time.nextScanWallMs = wallMs + emitIntervalMs;
      time.minWaitingMs = null;
      const open = { left: false, right: false };
      // Entries come by timestamp: past the first open window of each side, nothing more can be due.
      for (const e of store.all()) {
        time.minWaitingMs = e.key.timestamp;
        if (open.left && open.right) break;
        if (dueOf(e.key.timestamp, e.key.leftSide) >= nowMs) {
          if (e.key.leftSide) open.left = true;
          else open.right = true;
          continue;
        }
        store.delete(e.key);
        // The joiner of this processor takes (this side, other side); a waiting record may be of either side.
        for (const waiting of e.value) {
          const result =
            e.key.leftSide === o.leftSide
              ? o.joiner(waiting.value as V, null, e.key.key)
              : o.joiner(null, waiting.value as VO, e.key.key);
          context.forward(recordOf(e.key.key, result, e.key.timestamp));
        }
      }
    };

    return {
      init(c) {
        context = c;
        other = c.getStateStore<DuplicatesWindowStore<K, VO>>(o.otherStoreName);
        if (o.sharedStoreName !== null)
          shared = c.getStateStore<PlainKeyValueStore<OuterKey<K>, Waiting[]>>(o.sharedStoreName);
        time = o.times.of(c.taskId);
        emitIntervalMs = outerJoinEmitIntervalMs(c.appConfigs());
      },
      process(r) {
        recordOf = (key, value, timestamp) => r.withKey(key).withValue(value).withTimestamp(timestamp);
        const ts = r.timestamp;
        // Every record that reaches the join moves its time, even one it then drops (as Kafka's join processor).
        time.advance(ts);
        if (r.value === null || r.value === undefined) return;
        if (r.key === null || r.key === undefined) {
          // A record without a key can have no partner; the outer side of a left or outer join emits it at once,
          // joined with null, as Kafka's KStreamKStreamJoin does since 3.7 (KIP-962); an inner side drops it.
          if (thisOuter) context.forward(r.withValue(o.joiner(r.value, null, r.key)));
          return;
        }
        // Only a record that is not out of order can have closed windows.
        if (shared !== null && ts === time.streamTimeMs) emitClosed(shared);
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
        // Kafka's test leaves the grace out: a record whose window ended before the join's time is emitted at once,
        // though a partner may still come within the grace (and then joins it as well).
        if (shared === null || Math.max(0, ts + afterMs) < time.streamTimeMs) {
          context.forward(r.withValue(o.joiner(r.value, null, r.key)));
          return;
        }
        time.noteWaiting(ts);
        const waitingKey = { timestamp: ts, leftSide: o.leftSide, key: r.key };
        const waiting = shared.get(waitingKey) ?? [];
        waiting.push({ leftSide: o.leftSide, value: r.value });
        shared.put(waitingKey, waiting);
      },
      close() {
        o.times.remove(context.taskId);
      },
    };
  };
}

/**
 * The join of a stream with itself on one store (Kafka's KStreamKStreamSelfJoin, single.store.self.join): the
 * record (not yet in the store, see windowedSupplier) joins the stored ones it would meet as the left side, then
 * those it would meet as the right side, and itself, in the order the two-store inner join emits them: its join with
 * itself goes before the first right-side partner later than it. Its own join is emitted only while the record is
 * within the store's retention of the processor's stream time, as Kafka's. Records with a null key or value are
 * dropped.
 */
function selfJoinSupplier<K, V, VR>(storeName: string, w: JoinWindows, joiner: StreamJoiner<K, V, V, VR>) {
  const retentionMs = w.size() + w.graceMs;
  return (): Processor<K, V, K, VR> => {
    let context: ProcessorContext<K, VR>;
    let store: DuplicatesWindowStore<K, V>;
    let streamTimeMs = -1;
    return {
      init(c) {
        context = c;
        store = c.getStateStore<DuplicatesWindowStore<K, V>>(storeName);
      },
      process(r) {
        if (r.key === null || r.key === undefined || r.value === null || r.value === undefined) return;
        const ts = r.timestamp;
        const { key, value } = r;
        // The joiner runs only for a join that is emitted, as for every other pair.
        const forwardSelf = () => context.forward(r.withValue(joiner(value, value, key)));
        streamTimeMs = Math.max(streamTimeMs, ts);
        const emitSelf = ts > streamTimeMs - retentionMs + 1;
        for (const m of store.fetch(r.key, Math.max(0, ts - w.beforeMs), Math.max(0, ts + w.afterMs)))
          context.forward(
            r.withValue(joiner(r.value, m.value, r.key)).withTimestamp(Math.max(ts, m.timestamp)),
          );
        let selfEmitted = false;
        for (const m of store.fetch(r.key, Math.max(0, ts - w.afterMs), Math.max(0, ts + w.beforeMs))) {
          if (ts < m.timestamp && !selfEmitted && emitSelf) {
            selfEmitted = true;
            forwardSelf();
          }
          context.forward(
            r.withValue(joiner(m.value, r.value, r.key)).withTimestamp(Math.max(ts, m.timestamp)),
          );
        }
        if (!selfEmitted && emitSelf) forwardSelf();
      },
    };
  };
}
