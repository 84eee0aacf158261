// The bytes engine of in-memory window and session stores (Kafka's InMemoryWindowStore and InMemorySessionStore):
// entries are grouped by the timestamp read from their key (a window's start, a session's end, a joined record's
// time), and each timestamp's entries go as soon as they are a retention old: an entry is live while its
// timestamp is after streamTime - retention, the store's stream time being the largest timestamp ever put
// (restoration included). A write at or before that bound is dropped, and reads never see an expired entry.
// Persistent stores expire whole segments instead (segmented-store.ts), so their oldest entries may outlive the
// retention by up to a segment; in memory there are no files to give back, and Kafka expires each window.

import assert from 'node:assert/strict';
import { type BytesEntry, type BytesKeyValueStore, InMemoryBytesStore } from './bytes-store.js';

export interface InMemoryWindowBytesStoreOptions {
  retentionMs: number;
  /** The timestamp that places an entry (window start, session end), read from its engine key. */
  timestampOf(key: Buffer): number;
}

export class InMemoryWindowBytesStore implements BytesKeyValueStore {
  readonly persistent = false;
  /** Timestamp -> that timestamp's entries; live timestamps only. */
  private readonly byTime = new Map<number, InMemoryBytesStore>();
  /** The keys of byTime, ascending, so expiry removes a prefix. */
  private readonly times: number[] = [];
  private streamTimeMs = -1;
  /** Writes dropped because their timestamp had expired (Kafka's expired-window-record-drop metric). */
  expiredRecordsDropped = 0;

  constructor(private readonly o: InMemoryWindowBytesStoreOptions) {
    assert.ok(o.retentionMs >= 0, `retention ${o.retentionMs} must not be negative`);
  }

  /** The store's stream time: the largest timestamp put so far (-1 before any). */
  get observedStreamTimeMs(): number {
    return this.streamTimeMs;
  }

  /** Entries with a timestamp at or before this have expired ("records expire exactly retention ms after"). */
  private get expiredUpToMs(): number {
    return this.streamTimeMs - this.o.retentionMs;
  }

  get(key: Buffer): Buffer | null {
    const timestampMs = this.o.timestampOf(key);
    if (timestampMs <= this.expiredUpToMs) return null;
    return this.byTime.get(timestampMs)?.get(key) ?? null;
  }

  put(key: Buffer, value: Buffer | null): void {
    const timestampMs = this.o.timestampOf(key);
    if (timestampMs > this.streamTimeMs) {
      this.streamTimeMs = timestampMs;
      this.dropExpired();
    }
    if (timestampMs <= this.expiredUpToMs) {
      this.expiredRecordsDropped++;
      return;
    }
    let entries = this.byTime.get(timestampMs);
    if (entries === undefined) {
      if (value === null) return; // nothing kept at this time: nothing to delete
      entries = new InMemoryBytesStore();
      this.byTime.set(timestampMs, entries);
      this.times.splice(this.insertionIndex(timestampMs), 0, timestampMs);
    }
    entries.put(key, value);
    if (entries.count() === 0) {
      this.byTime.delete(timestampMs);
      this.times.splice(this.insertionIndex(timestampMs), 1);
    }
  }

  /**
   * Deletes the entry if it is still kept (Kafka's InMemorySessionStore.remove): stream time does not move, and a
   * removal never counts as a dropped record, whereas a null put into an expired time does (it is a put).
   */
  remove(key: Buffer): void {
    const timestampMs = this.o.timestampOf(key);
    const entries = this.byTime.get(timestampMs);
    if (entries === undefined) return;
    entries.put(key, null);
    if (entries.count() === 0) {
      this.byTime.delete(timestampMs);
      this.times.splice(this.insertionIndex(timestampMs), 1);
    }
  }

  /** The index of the first time not below timestampMs (binary search; most writes land near the end). */
  private insertionIndex(timestampMs: number): number {
    let low = 0;
    let high = this.times.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.times[mid]! < timestampMs) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private dropExpired(): void {
    const firstLive = this.insertionIndex(this.expiredUpToMs + 1);
    if (firstLive === 0) return;
    for (const t of this.times.splice(0, firstLive)) {
      this.byTime.get(t)?.close();
      this.byTime.delete(t);
    }
  }

  range(from: Buffer | null, to: Buffer | null): BytesEntry[] {
    const out: BytesEntry[] = [];
    for (const entries of this.byTime.values()) for (const e of entries.range(from, to)) out.push(e);
    // The key comes first in every layout, so one key's entries sit under several times: merge them.
    return this.byTime.size > 1 ? out.sort((a, b) => Buffer.compare(a.key, b.key)) : out;
  }

  count(): number {
    let n = 0;
    for (const entries of this.byTime.values()) n += entries.count();
    return n;
  }

  flush(): void {}

  close(): void {
    for (const entries of this.byTime.values()) entries.close();
    this.byTime.clear();
    this.times.length = 0;
  }
}
