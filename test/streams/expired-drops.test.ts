// Which writes into an expired window or session count as dropped records (Kafka's dropped-records sensor, here
// the engines' expiredRecordsDropped), against Kafka 3.9's stores:
// - A persistent (segmented) store restored from its changelog moves its stream time to the restored batch's
//   largest timestamp first, then skips the records whose segment is expired at that time, silently
//   (AbstractRocksDBSegmentedBytesStore.getWriteBatches: no sensor, no log).
// - An in-memory window store restores record by record through put (InMemoryWindowStore's restore callback), so
//   a restored record a retention old counts as a drop there.
// - A session's removal (SessionStore.remove) never counts a drop (AbstractRocksDBSegmentedBytesStore.remove,
//   InMemorySessionStore.remove); a window store's null put is a put, and counts one when expired.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Serdes } from '../../src/streams/index.js';
import { openEngine } from '../../src/streams/runtime/engines.js';
import type { InMemoryWindowBytesStore } from '../../src/streams/state/in-memory-window-store.js';
import type { SegmentedBytesStore } from '../../src/streams/state/segmented-store.js';
import { SessionStore } from '../../src/streams/state/session-store.js';
import { restoreInto } from '../../src/streams/state/store-stack.js';
import { StoreBuilder } from '../../src/streams/state/stores.js';
import { TimestampedWindowStore, windowStoreKey } from '../../src/streams/state/window-store.js';

const S = Serdes.String();
const L = Serdes.Long();
const MINUTE_MS = 60_000;
/** Four minutes of retention: segments of two minutes. */
const RETENTION_MS = 4 * MINUTE_MS;

type Engine = SegmentedBytesStore | InMemoryWindowBytesStore;

function builder(name: string, engine: 'persistent' | 'in-memory', kind: 'window' | 'session') {
  const b = new StoreBuilder(name, engine, S, L, kind === 'window');
  if (kind === 'window') b.window = { sizeMs: MINUTE_MS, retentionMs: RETENTION_MS };
  else b.session = { retentionMs: RETENTION_MS };
  return b;
}

function withDir(run: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'brook-expired-drops-'));
  try {
    run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function windowStore(engine: Engine) {
  return new TimestampedWindowStore<string, number>({
    name: 'w',
    engine,
    changelog: null,
    serdeTopic: 'w-changelog',
    keySerde: S,
    valueSerde: L,
    windowSizeMs: MINUTE_MS,
    recordTimestamp: () => 0,
  });
}

/** One restored batch of a window store's changelog, out of order: minutes 1, 10, 2, 7, 9 for keys a..e. */
function restoreOutOfOrder(engine: Engine): void {
  const minutes = [1, 10, 2, 7, 9];
  minutes.forEach((minute, i) => {
    const key = windowStoreKey(Buffer.from(String.fromCharCode(97 + i)), minute * MINUTE_MS);
    restoreInto(engine, true, key, L.serialize('', minute)!, minute * MINUTE_MS);
  });
  engine.flush();
}

describe('expired writes counted as dropped records', () => {
  it('a persistent window store restored out of order keeps what Kafka keeps and counts no drop', () =>
    withDir((dir) => {
      const engine = openEngine(builder('w', 'persistent', 'window'), dir) as SegmentedBytesStore;
      try {
        restoreOutOfOrder(engine);
        // Stream time 10 min: segments before the one of 10 - 4 = 6 min (3: 6..8 min) are gone, so are minutes
        // 1 and 2 whichever came first; 7 and 9 are read (after 10 - 4 + 1 = 6 min + 1 ms).
        assert.equal(engine.observedStreamTimeMs, 10 * MINUTE_MS);
        assert.deepEqual(engine.segmentIds(), [3, 4, 5]);
        const store = windowStore(engine);
        assert.deepEqual(
          store.all().map((w) => [w.key, w.windowStartMs / MINUTE_MS, w.value.value]),
          [
            ['b', 10, 10],
            ['d', 7, 7],
            ['e', 9, 9],
          ],
        );
        assert.equal(store.fetch('a', MINUTE_MS), null);
        assert.equal(store.fetch('c', 2 * MINUTE_MS), null);
        assert.equal(engine.expiredRecordsDropped, 0, 'a restoration skips expired records silently');
      } finally {
        engine.close();
      }
    }));

  it('an in-memory window store restored out of order counts each expired record, as its puts do', () =>
    withDir((dir) => {
      const engine = openEngine(builder('m', 'in-memory', 'window'), dir) as InMemoryWindowBytesStore;
      try {
        restoreOutOfOrder(engine);
        assert.deepEqual(
          windowStore(engine)
            .all()
            .map((w) => w.key),
          ['b', 'd', 'e'],
        );
        // Minute 1 came before stream time moved and was kept, then expired; minute 2 came after 10: dropped.
        assert.equal(engine.expiredRecordsDropped, 1);
      } finally {
        engine.close();
      }
    }));

  for (const kind of ['persistent', 'in-memory'] as const)
    it(`${kind === 'persistent' ? 'a persistent' : 'an in-memory'} session store's removal of an expired session is no dropped record; a window tombstone is`, () =>
      withDir((dir) => {
        const engine = openEngine(builder('s', kind, 'session'), dir) as Engine;
        const sessions = new SessionStore<string, number>({
          name: 's',
          engine,
          changelog: null,
          serdeTopic: 's-changelog',
          keySerde: S,
          valueSerde: L,
          recordTimestamp: () => 0,
        });
        try {
          sessions.put('a', 0, MINUTE_MS, 1);
          sessions.put('b', 10 * MINUTE_MS, 10 * MINUTE_MS, 2);
          sessions.remove('a', 0, MINUTE_MS);
          assert.equal(engine.expiredRecordsDropped, 0);
          assert.deepEqual(
            sessions.all().map((s) => s.key),
            ['b'],
          );
          sessions.remove('b', 10 * MINUTE_MS, 10 * MINUTE_MS);
          assert.deepEqual(sessions.all(), []);
          assert.equal(engine.expiredRecordsDropped, 0);
        } finally {
          sessions.close();
        }
        const windows = openEngine(builder('w', kind, 'window'), dir) as Engine;
        try {
          const store = windowStore(windows);
          store.put('a', { value: 10, timestamp: 10 * MINUTE_MS }, 10 * MINUTE_MS);
          store.put('a', null, MINUTE_MS);
          assert.equal(windows.expiredRecordsDropped, 1, "a window store's null put is a put (Kafka's)");
        } finally {
          windows.close();
        }
      }));
});
