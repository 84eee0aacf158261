// A tombstone (a null put, or a restored changelog tombstone) for a live segment that does not exist yet. Kafka's
// AbstractRocksDBSegmentedBytesStore.put and getWriteBatches open that segment (getOrCreateSegmentIfLive) and
// write the delete into it; Brook opens none, as there is nothing to delete. What the two share, and what this
// file pins: the tombstone moves stream time, the segments it expires are dropped, a later write into an
// expired segment is a dropped record, and reads answer the same. What differs is only an empty segment
// directory, which no read, metric or expiry sees (Brook's state directory is LMDB, never Kafka's RocksDB).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Serdes } from '../../src/streams/index.js';
import { openEngine } from '../../src/streams/runtime/engines.js';
import type { SegmentedBytesStore } from '../../src/streams/state/segmented-store.js';
import { restoreInto } from '../../src/streams/state/store-stack.js';
import { StoreBuilder } from '../../src/streams/state/stores.js';
import { windowStoreKey } from '../../src/streams/state/window-store.js';

const S = Serdes.String();
const L = Serdes.Long();
const MINUTE_MS = 60_000;
/** Four minutes of retention: segments of two minutes. */
const RETENTION_MS = 4 * MINUTE_MS;

const key = (name: string, minute: number) => windowStoreKey(Buffer.from(name), minute * MINUTE_MS);
const value = (n: number) => L.serialize('', n)!;

function withWindowEngine(run: (engine: SegmentedBytesStore, dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'brook-segment-tombstones-'));
  const b = new StoreBuilder('w', 'persistent', S, L, true);
  b.window = { sizeMs: MINUTE_MS, retentionMs: RETENTION_MS };
  const engine = openEngine(b, dir) as SegmentedBytesStore;
  try {
    run(engine, dir);
  } finally {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const segmentDirs = (dir: string) =>
  existsSync(join(dir, 'lmdb', 'w')) ? readdirSync(join(dir, 'lmdb', 'w')).sort() : [];

describe('a tombstone for a live segment that does not exist', () => {
  for (const how of ['a null put', 'a restored tombstone'] as const)
    it(`${how} moves stream time and expires segments as Kafka's, and opens no segment`, () =>
      withWindowEngine((engine, dir) => {
        engine.put(key('a', 1), value(1));
        assert.deepEqual(engine.segmentIds(), [0]);
        // Minute 10 is segment 5, which does not exist: stream time 10 min expires segments before 3 (6 min).
        if (how === 'a null put') engine.put(key('b', 10), null);
        else restoreInto(engine, true, key('b', 10), null, 10 * MINUTE_MS);
        assert.equal(engine.observedStreamTimeMs, 10 * MINUTE_MS);
        assert.equal(engine.segmentsDropped, 1, "minute 1's segment went, as in Kafka");
        assert.deepEqual(engine.segmentIds(), [], 'Kafka would hold an empty segment 5 here');
        assert.deepEqual(segmentDirs(dir), []);
        assert.equal(engine.expiredRecordsDropped, 0);
        // A write older than the tombstone's retention is dropped, as in Kafka, whose stream time is the same.
        engine.put(key('c', 5), value(5));
        assert.equal(engine.expiredRecordsDropped, 1);
        // A live write opens its segment; what is read is what Kafka reads (its segment 5 holds only a delete).
        engine.put(key('b', 10), value(10));
        engine.put(key('d', 7), value(7));
        assert.deepEqual(engine.segmentIds(), [3, 5]);
        assert.deepEqual(
          engine.range(null, null).map((e) => e.key.subarray(0, 1).toString()),
          ['b', 'd'],
        );
        assert.deepEqual(segmentDirs(dir), [`w.${6 * MINUTE_MS}`, `w.${10 * MINUTE_MS}`]);
      }));
});
