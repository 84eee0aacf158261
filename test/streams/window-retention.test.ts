// Retention of window and session stores: Kafka's segmented stores drop whole segments (retention / 2 wide, at
// least a minute) once the store's stream time has moved a retention past them, so old windows leave the store
// and their files leave the disk; writes older than the retention are dropped; a reopened store finds its
// segments again.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  Consumed,
  Materialized,
  Produced,
  Serdes,
  SessionWindows,
  StreamsBuilder,
  TimeWindows,
  TopologyTestDriver,
  WindowedSerdes,
} from '../../src/streams/index.js';
import { openEngine } from '../../src/streams/runtime/engines.js';
import type { InMemoryWindowBytesStore } from '../../src/streams/state/in-memory-window-store.js';
import type { SegmentedBytesStore } from '../../src/streams/state/segmented-store.js';
import { StoreBuilder } from '../../src/streams/state/stores.js';
import { windowStoreKey } from '../../src/streams/state/window-store.js';

const S = Serdes.String();
const L = Serdes.Long();
const MINUTE_MS = 60_000;

/** Bytes the files under `dir` occupy on disk (allocated blocks, not apparent sizes). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    if (st.isFile()) total += st.blocks * 512;
  }
  return total;
}

function windowStoreBuilder(name: string, retentionMs: number, engine: 'persistent' | 'in-memory') {
  const b = new StoreBuilder(name, engine, S, L, true);
  b.window = { sizeMs: MINUTE_MS, retentionMs };
  return b;
}

describe('window store retention', () => {
  it('old windows leave a persistent window store and its segment directories leave the disk', () => {
    const parent = mkdtempSync(join(tmpdir(), 'brook-retention-'));
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeWithNoGrace(MINUTE_MS))
      .count(Materialized.as('per-minute'))
      .toStream()
      .to('counts', Produced.with(WindowedSerdes.timeWindowedSerdeFrom(S, MINUTE_MS), L));
    const driver = new TopologyTestDriver(builder.build(), { 'state.dir': parent });
    try {
      const [driverDir] = readdirSync(parent);
      const storeDir = join(parent, driverDir!, '0_0', 'lmdb', 'per-minute');
      const input = driver.createInputTopic('clicks', S, S);
      const KEYS = 40;
      let usageAt10 = 0;
      for (let minute = 0; minute < 40; minute++) {
        for (let k = 0; k < KEYS; k++) input.pipeInput(`key-${k}`, 'x'.repeat(100), minute * MINUTE_MS + k);
        if (minute === 10) usageAt10 = diskBytes(storeDir);
      }
      const streamTimeMs = 39 * MINUTE_MS + KEYS - 1;
      const store = driver.getTimestampedWindowStore<string, number>('per-minute')!;
      // Retention is size + grace = 60 s in segments of 60 s (retention / 2, at least a minute): the oldest
      // live segment holds streamTime - retention (minute 38), so only the windows of minutes 38 and 39 are left,
      // and of them reads see only those from streamTime - retention + 1 on (Kafka 3.4+, KAFKA-12960): minute 39's.
      assert.equal(store.fetch('key-3', 0), null, 'the first window has expired');
      assert.equal(store.fetch('key-3', 30 * MINUTE_MS), null);
      assert.equal(
        store.fetch('key-3', 38 * MINUTE_MS),
        null,
        'kept in a live segment, but older than retention',
      );
      assert.equal(store.fetch('key-3', 39 * MINUTE_MS)?.value, 1);
      const all = store.all();
      assert.equal(all.length, KEYS);
      for (const w of all)
        assert.ok(
          w.windowStartMs > streamTimeMs - MINUTE_MS && w.windowStartMs <= streamTimeMs,
          `window ${w.windowStartMs}`,
        );
      assert.deepEqual(readdirSync(storeDir).sort(), ['per-minute.2280000', 'per-minute.2340000']);
      // The disk use stays bounded: 29 more minutes of windows added nothing lasting.
      const usageAt40 = diskBytes(storeDir);
      assert.ok(usageAt10 > 0);
      assert.ok(usageAt40 <= usageAt10 * 1.5, `disk use grew from ${usageAt10} to ${usageAt40} bytes`);
    } finally {
      driver.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('withRetention keeps windows longer, and a retention below size plus grace is refused', () => {
    const builder = new StreamsBuilder();
    const windowed = builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(TimeWindows.ofSizeAndGrace(MINUTE_MS, 10_000));
    assert.throws(
      () => windowed.count(Materialized.as<string, number>('short').withRetention(MINUTE_MS)),
      /must be no smaller than its window size plus the grace period/,
    );
    windowed.count(Materialized.as<string, number>('long').withRetention(10 * MINUTE_MS));
    const topology = builder.build();
    assert.equal(topology.stores.get('long')!.window?.retentionMs, 10 * MINUTE_MS);
    const driver = new TopologyTestDriver(topology);
    try {
      const input = driver.createInputTopic('clicks', S, S);
      for (let minute = 0; minute < 20; minute++) input.pipeInput('a', 'x', minute * MINUTE_MS);
      const store = driver.getTimestampedWindowStore<string, number>('long')!;
      // Stream time 19 min, retention 10 min in segments of 5 min: the segment holding 9 min and later live
      // (windows 5 to 19 kept), and reads see the windows from 19 - 10 min + 1 ms on.
      assert.deepEqual(
        store.fetchRange('a', 0, 20 * MINUTE_MS).map((w) => w.windowStartMs / MINUTE_MS),
        [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
      );
    } finally {
      driver.close();
    }
  });

  it('session stores drop sessions that ended a retention ago', () => {
    const builder = new StreamsBuilder();
    builder
      .stream('clicks', Consumed.with(S, S))
      .groupByKey()
      .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(MINUTE_MS))
      .count(Materialized.as('sessions'));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('clicks', S, S);
      // A two-record session every ten minutes for five hours.
      for (let i = 0; i < 30; i++) {
        input.pipeInput('a', 'x', i * 10 * MINUTE_MS);
        input.pipeInput('a', 'x', i * 10 * MINUTE_MS + 1000);
      }
      const store = driver.getSessionStore<string, number>('sessions')!;
      assert.deepEqual(
        store.fetch('a').map((s) => [s.startMs, s.endMs, s.value]),
        [[290 * MINUTE_MS, 290 * MINUTE_MS + 1000, 2]],
      );
    } finally {
      driver.close();
    }
  });

  it('in-memory window and session stores drop each window a retention old, as Kafka does', () => {
    const builder = new StreamsBuilder();
    const grouped = builder.stream('clicks', Consumed.with(S, S)).groupByKey();
    grouped
      .windowedBy(TimeWindows.ofSizeWithNoGrace(MINUTE_MS))
      .count(Materialized.inMemory<string, number>('per-minute').withValueSerde(L));
    grouped
      .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(MINUTE_MS))
      .count(Materialized.inMemory<string, number>('sessions').withValueSerde(L));
    const driver = new TopologyTestDriver(builder.build());
    try {
      const input = driver.createInputTopic('clicks', S, S);
      input.pipeInput('a', 'x', 8 * MINUTE_MS);
      input.pipeInput('a', 'x', 8 * MINUTE_MS + 12_000);
      input.pipeInput('a', 'x', 9 * MINUTE_MS + 30_000);
      // Retention is size + grace = 1 min (segments of 1 min). The window store's stream time is its newest
      // window's start, 9 min: the window of 8 min is a retention old and gone, though its segment (8-9 min)
      // would still be live in a persistent store.
      const windows = driver.getTimestampedWindowStore<string, number>('per-minute')!;
      assert.equal(windows.fetch('a', 8 * MINUTE_MS), null, 'the window of 8 min has expired');
      assert.equal(windows.fetch('a', 9 * MINUTE_MS)?.value, 1);
      assert.deepEqual(
        windows.all().map((w) => w.windowStartMs),
        [9 * MINUTE_MS],
      );
      // Sessions: retention gap + grace = 1 min; stream time is the newest session's end, 9.5 min, so the session
      // that ended at 8.2 min has gone.
      const sessions = driver.getSessionStore<string, number>('sessions')!;
      assert.deepEqual(
        sessions.fetch('a').map((s) => [s.startMs, s.endMs, s.value]),
        [[9 * MINUTE_MS + 30_000, 9 * MINUTE_MS + 30_000, 1]],
      );
    } finally {
      driver.close();
    }
  });

  it('a segmented store drops expired segments and writes into them (restoration too) and reopens its segments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-segments-'));
    try {
      const key = (k: string, startMs: number) => windowStoreKey(Buffer.from(k), startMs);
      const retentionMs = 4 * MINUTE_MS; // segments of 2 minutes
      const first = openEngine(
        windowStoreBuilder('w', retentionMs, 'persistent'),
        dir,
      ) as SegmentedBytesStore;
      assert.equal(first.intervalMs, 2 * MINUTE_MS);
      for (let minute = 0; minute <= 10; minute++)
        first.put(key('a', minute * MINUTE_MS), Buffer.from([minute]));
      // Stream time 10 min: the segment holding 10 - 4 = 6 min (3: 6..8 min) is the oldest live one.
      assert.deepEqual(first.segmentIds(), [3, 4, 5]);
      assert.equal(first.get(key('a', 5 * MINUTE_MS)), null);
      // 6 min is kept in a live segment but not read: reads start at streamTime - retention + 1 (KAFKA-12960).
      assert.equal(first.get(key('a', 6 * MINUTE_MS)), null);
      assert.deepEqual(first.get(key('a', 7 * MINUTE_MS)), Buffer.from([7]));
      assert.deepEqual(
        first.range(null, null).map((e) => e.value[0]),
        [7, 8, 9, 10],
      );
      // A late write older than the retention (as a restored changelog record would be) is dropped.
      first.put(key('b', 2 * MINUTE_MS), Buffer.from([1]));
      assert.equal(first.expiredRecordsDropped, 1);
      assert.equal(first.get(key('b', 2 * MINUTE_MS)), null);
      first.put(key('a', 13 * MINUTE_MS), Buffer.from([13]));
      assert.deepEqual(first.segmentIds(), [4, 5, 6]);
      assert.deepEqual(readdirSync(join(dir, 'lmdb', 'w')).sort(), ['w.480000', 'w.600000', 'w.720000']);
      first.close();

      const again = openEngine(
        windowStoreBuilder('w', retentionMs, 'persistent'),
        dir,
      ) as SegmentedBytesStore;
      try {
        assert.equal(again.reopened, true);
        assert.deepEqual(again.segmentIds(), [4, 5, 6]);
        // Kept: 8 min on, all read: a reopened store has no stream time (Kafka's observedStreamTime stays -1
        // after openExisting) until a write sets it.
        assert.equal(again.observedStreamTimeMs, -1);
        assert.deepEqual(
          again.range(null, null).map((e) => e.value[0]),
          [8, 9, 10, 13],
        );
        // Its stream time is then that write's (7 min): its segment (6..8 min) lives again, nothing is dropped.
        again.put(key('c', 7 * MINUTE_MS), Buffer.from([7]));
        assert.equal(again.observedStreamTimeMs, 7 * MINUTE_MS);
        assert.equal(again.expiredRecordsDropped, 0);
        assert.deepEqual(again.segmentIds(), [3, 4, 5, 6]);
        assert.deepEqual(again.get(key('c', 7 * MINUTE_MS)), Buffer.from([7]));
      } finally {
        again.close();
      }
      // In memory, each window goes once it is a retention old (Kafka's InMemoryWindowStore): at stream time
      // 10 min with 4 min of retention, the window of 6 min has gone although its segment would still live.
      const memory = openEngine(
        windowStoreBuilder('m', retentionMs, 'in-memory'),
        dir,
      ) as InMemoryWindowBytesStore;
      for (let minute = 0; minute <= 10; minute++)
        memory.put(key('a', minute * MINUTE_MS), Buffer.from([minute]));
      assert.deepEqual(
        memory.range(null, null).map((e) => e.value[0]),
        [7, 8, 9, 10],
      );
      assert.equal(memory.get(key('a', 6 * MINUTE_MS)), null);
      memory.put(key('b', 6 * MINUTE_MS), Buffer.from([6]));
      assert.equal(memory.expiredRecordsDropped, 1, 'a write a retention old is dropped');
      assert.equal(memory.count(), 4);
      memory.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
