// Which bytes engine a store gets: in memory, or persistent (LMDB) under the task's directory. Persistent window
// and session stores get a segmented engine (segmented-store.ts), each segment in
// `<task dir>/lmdb/<store>/<store>.<segment start ms>`, Kafka's segment naming; in-memory ones expire each window
// on its own (in-memory-window-store.ts), as Kafka's in-memory stores do.

import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BytesKeyValueStore } from '../state/bytes-store.js';
import { InMemoryBytesStore } from '../state/bytes-store.js';
import { InMemoryWindowBytesStore } from '../state/in-memory-window-store.js';
import { LmdbBytesStore } from '../state/lmdb-store.js';
import { SegmentedBytesStore, type SegmentFactory, segmentIntervalMs } from '../state/segmented-store.js';
import type { StoreBuilder } from '../state/stores.js';

const WINDOW_SUFFIX_BYTES = 12;
const SESSION_SUFFIX_BYTES = 16;

/** A window store key's window start (or a join store key's record time). */
function windowKeyTimestamp(key: Buffer): number {
  return Number(key.readBigInt64BE(key.length - WINDOW_SUFFIX_BYTES));
}

/** A session store key's session end. */
function sessionKeyTimestamp(key: Buffer): number {
  return Number(key.readBigInt64BE(key.length - SESSION_SUFFIX_BYTES));
}

export function openEngine(builder: StoreBuilder, taskDir: string): BytesKeyValueStore {
  const retentionMs = builder.window?.retentionMs ?? builder.session?.retentionMs;
  if (retentionMs !== undefined) {
    const timestampOf = builder.session !== null ? sessionKeyTimestamp : windowKeyTimestamp;
    // In memory, each window expires on its own, as in Kafka's InMemoryWindowStore; on disk, whole segments.
    if (builder.engine !== 'persistent') return new InMemoryWindowBytesStore({ retentionMs, timestampOf });
    return new SegmentedBytesStore({
      retentionMs,
      timestampOf,
      segments: lmdbSegments(
        join(taskDir, 'lmdb', builder.name),
        builder.name,
        segmentIntervalMs(retentionMs),
      ),
    });
  }
  if (builder.engine === 'persistent') return new LmdbBytesStore(join(taskDir, 'lmdb', builder.name));
  return new InMemoryBytesStore();
}

function lmdbSegments(dir: string, storeName: string, intervalMs: number): SegmentFactory {
  const prefix = `${storeName}.`;
  const pathOf = (id: number) => join(dir, `${prefix}${id * intervalMs}`);
  return {
    persistent: true,
    reopened: existsSync(dir),
    existing() {
      if (!existsSync(dir)) return [];
      const ids: number[] = [];
      for (const name of readdirSync(dir)) {
        if (!name.startsWith(prefix)) continue;
        const startMs = Number(name.slice(prefix.length));
        // A directory of another interval (the retention changed) cannot be placed: left for the new one.
        if (Number.isSafeInteger(startMs) && startMs % intervalMs === 0) ids.push(startMs / intervalMs);
      }
      return ids;
    },
    open: (id) => new LmdbBytesStore(pathOf(id)),
    destroy(id, segment) {
      segment.close();
      // Unlinking files LMDB still maps is safe on POSIX: the space comes back when the map is released.
      rmSync(pathOf(id), { recursive: true, force: true });
    },
  };
}
