// suppress(): holds a table's updates back and emits only the last one per key, when its window closes
// (untilWindowCloses: stream time passed the window's end plus the grace period) or when it has waited a time
// limit of stream time (untilTimeLimit), as Kafka's KTableSuppressProcessor. The held updates live in a
// SuppressBuffer store (state/suppress-buffer.ts) named as Kafka names it (`KTABLE-SUPPRESS-STATE-STORE-<n>`,
// or `<Suppressed name>-store`), logged to `<application.id>-<store>-changelog` and restored from it, so
// updates buffered when an instance crashes are emitted by the task's next owner. Entries leave in buffer-time
// order (window end, or the first held record's time), then by key bytes. Stream time is the largest record
// timestamp the processor has seen since the task started (Kafka's observedStreamTime, not restored either).

import assert from 'node:assert/strict';
import type { Named } from './dsl-options.js';
import { KTable } from './ktable.js';
import { Change, type ProcessorContext, type ProcessorSupplier, Record } from './processor.js';
import type { Serde } from './serdes.js';
import { StoreBuilder } from './state/stores.js';
import type { SuppressBuffer } from './state/suppress-buffer.js';
import { type Windowed, WindowedSerdes } from './windows.js';

export class Suppressed {
  private constructor(
    readonly mode: 'untilWindowCloses' | 'untilTimeLimit',
    readonly timeLimitMs: number,
    readonly name: string | null,
  ) {}

  /** Kafka's Suppressed.untilWindowCloses(BufferConfig.unbounded()): one final result per window. */
  static untilWindowCloses(): Suppressed {
    return new Suppressed('untilWindowCloses', 0, null);
  }

  static untilTimeLimit(timeToWaitForMoreEventsMs: number): Suppressed {
    return new Suppressed('untilTimeLimit', timeToWaitForMoreEventsMs, null);
  }

  withName(name: string): Suppressed {
    return new Suppressed(this.mode, this.timeLimitMs, name);
  }
}

export function suppressTable<K, V>(
  table: KTable<K, V>,
  suppressed: Suppressed,
  named?: Named,
): KTable<K, V> {
  const b = table.builder;
  const userName = named?.name ?? suppressed.name;
  const name = userName ?? b.newProcessorName('KTABLE-SUPPRESS-');
  const storeName = userName !== null ? `${userName}-store` : b.newStoreName('KTABLE-SUPPRESS-');
  const windows = table.windows;
  if (suppressed.mode === 'untilWindowCloses' && windows === null)
    throw new Error('untilWindowCloses applies to the table of a windowed aggregation');
  const store = new StoreBuilder(storeName, 'in-memory', null, null, false);
  store.suppressBuffer = true;
  store.serdesFrom = (defaultKey, defaultValue) => ({
    key: (table.keySerde as Serde<unknown> | null) ?? windowedKeySerde(windows, defaultKey),
    value: (table.valueSerde as Serde<unknown> | null) ?? defaultValue,
  });
  b.topology.addProcessor(name, suppressSupplier(storeName, suppressed, windows), table.nodeName);
  b.topology.addStateStore(store, name);
  return new KTable<K, V>(b, name, table.keySerde, table.valueSerde, null, windows);
}

/** The serde of a windowed table's keys made from the default key serde (Kafka's bytes for each kind). */
function windowedKeySerde(
  windows: KTable<unknown, unknown>['windows'],
  inner: Serde<unknown>,
): Serde<unknown> {
  if (windows === null) return inner;
  const w = windows as { inactivityGapMs?: number; timeDifferenceMs?: number; sizeMs?: number };
  if (w.inactivityGapMs !== undefined)
    return WindowedSerdes.sessionWindowedSerdeFrom(inner) as Serde<unknown>;
  const sizeMs = w.timeDifferenceMs ?? w.sizeMs;
  assert.ok(sizeMs !== undefined, 'a windowed table without a window size');
  return WindowedSerdes.timeWindowedSerdeFrom(inner, sizeMs) as Serde<unknown>;
}

function suppressSupplier(
  storeName: string,
  suppressed: Suppressed,
  windows: KTable<unknown, unknown>['windows'],
): ProcessorSupplier<unknown, Change<unknown>, unknown, Change<unknown>> {
  // untilWindowCloses: buffer time is the window end, and an entry is due once stream time - grace reaches it;
  // untilTimeLimit: buffer time is the record's, due once stream time - limit reaches it.
  const waitMs = suppressed.mode === 'untilWindowCloses' ? windows!.graceMs : suppressed.timeLimitMs;
  return () => {
    let ctx: ProcessorContext<unknown, Change<unknown>>;
    let buffer: SuppressBuffer;
    let observedStreamTimeMs = -1;
    return {
      init(c) {
        ctx = c;
        buffer = c.getStateStore<SuppressBuffer>(storeName);
      },
      process(r) {
        observedStreamTimeMs = Math.max(observedStreamTimeMs, r.timestamp);
        const timeMs =
          suppressed.mode === 'untilWindowCloses' ? (r.key as Windowed<unknown>).window.endMs : r.timestamp;
        const meta = ctx.recordMetadata();
        buffer.put(timeMs, r.key, r.value.newValue, r.value.oldValue, {
          timestamp: r.timestamp,
          offset: meta?.offset ?? -1,
          topic: meta?.topic ?? '',
          partition: meta?.partition ?? -1,
          headers: [...r.headers],
        });
        buffer.evictUpTo(observedStreamTimeMs - waitMs, (key, newValue, priorValue, context) =>
          ctx.forward(new Record(key, new Change(newValue, priorValue), context.timestamp, context.headers)),
        );
      },
    };
  };
}
