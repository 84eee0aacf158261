// suppress(): holds a table's updates back and emits only the last one per key, when its window closes
// (untilWindowCloses: stream time passed the window's end plus the grace period) or when it has waited a time
// limit of stream time (untilTimeLimit). Emitted in the order the keys were first buffered, as Kafka's
// in-memory time-ordered buffer emits them.
//
// The buffer is in memory only: Kafka logs it to a changelog, Brook does not yet, so updates buffered when an
// instance crashes are lost (README: not built yet).

import type { Named } from './dsl-options.js';
import { statelessSupplier } from './kstream.js';
import { KTable } from './ktable.js';
import { Change, type Record } from './processor.js';
import type { Windowed } from './windows.js';

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

interface Buffered {
  record: Record<unknown, Change<unknown>>;
  /** Stream time at which it goes out. */
  dueMs: number;
}

export function suppressTable<K, V>(
  table: KTable<K, V>,
  suppressed: Suppressed,
  named?: Named,
): KTable<K, V> {
  const b = table.builder;
  const name = named?.name ?? suppressed.name ?? b.newProcessorName('KTABLE-SUPPRESS-');
  const windows = table.windows;
  if (suppressed.mode === 'untilWindowCloses' && windows === null)
    throw new Error('untilWindowCloses applies to the table of a windowed aggregation');
  const keyOf = (key: unknown) => {
    if (windows !== null) {
      const w = key as Windowed<unknown>;
      return `${JSON.stringify(w.key)}@${w.window.startMs}`;
    }
    return JSON.stringify(key);
  };
  b.topology.addProcessor(
    name,
    statelessSupplier<unknown, Change<unknown>>((ctx) => {
      const buffer = new Map<string, Buffered>();
      let streamTimeMs = -1;
      return (r) => {
        streamTimeMs = Math.max(streamTimeMs, r.timestamp);
        const id = keyOf(r.key);
        const previous = buffer.get(id);
        const dueMs =
          suppressed.mode === 'untilWindowCloses'
            ? (r.key as Windowed<unknown>).window.endMs + windows!.graceMs
            : (previous?.dueMs ?? r.timestamp + suppressed.timeLimitMs);
        // Keep the first old value seen and the latest new value, so the emitted change spans the held updates.
        const oldValue = previous === undefined ? r.value.oldValue : previous.record.value.oldValue;
        buffer.set(id, { record: r.withValue(new Change(r.value.newValue, oldValue)), dueMs });
        for (const [k, e] of buffer) {
          if (e.dueMs > streamTimeMs) continue;
          buffer.delete(k);
          ctx().forward(e.record);
        }
      };
    }),
    table.nodeName,
  );
  return new KTable<K, V>(b, name, table.keySerde, table.valueSerde, null, windows);
}
