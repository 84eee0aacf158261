// The bytes engine of window and session stores: Kafka's segmented store. Entries are spread over segments by a
// timestamp read from their key (a window's start, a session's end, a joined record's time); segment i holds the
// timestamps [i * interval, (i + 1) * interval), interval = max(retention / 2, 60 s) as Kafka sets it. Each
// segment is its own engine (for persistent stores its own LMDB environment, directory
// `<store>.<i * interval>`), so expiry drops a whole segment and gives its disk space back: LMDB never shrinks a
// file, and deleting entries one by one would leave the file as large as it ever was.
//
// Retention follows the store's own stream time, the largest timestamp put since it was opened (restoration
// included; not the timestamps of what a reopened store finds on disk), as in Kafka's
// AbstractRocksDBSegmentedBytesStore: the oldest live segment is the one holding streamTime - retention;
// each write removes the segments before it, and a write into one of them is dropped (Kafka's "Skipping record
// for expired segment"). Entries of the oldest live segment may be older than the retention: reads skip them, as
// Kafka's do since 3.4 (KAFKA-12960: get and fetch start at streamTime - retention + 1), so a stream-stream join's
// late record finds no partner older than the retention, though its segment is still there.
//
// What counts as a dropped record (expiredRecordsDropped, Kafka's dropped-records sensor), as Kafka 3.9's store:
// a put into an expired segment, a null put included (a window store's delete is a put). Not a removal (remove:
// a session store's, which deletes what the segment holds and never counts), and not a restored changelog record
// (putRestored): Kafka's restoration (getWriteBatches) skips the records of expired segments silently. It first
// moves stream time to the restored batch's largest timestamp; Brook moves it record by record, which keeps and
// skips the same records: a segment live at the batch's end was live at every earlier stream time, and a record
// written into a segment that the batch's later records expire goes with its segment.
//
// A tombstone (null put or restored) for a live segment that does not exist opens none: Kafka's opens it
// (getOrCreateSegmentIfLive) and writes the delete into it. Stream time, the segments dropped, the records counted
// as dropped and every read are the same either way; only an empty segment directory differs, which nothing reads.

import assert from 'node:assert/strict';
import type { BytesEntry, BytesKeyValueStore } from './bytes-store.js';
import { timestampedStoredValue } from './store-stack.js';

/** Kafka's smallest segment interval for window and session stores. */
const SEGMENT_INTERVAL_MIN_MS = 60_000;

export function segmentIntervalMs(retentionMs: number): number {
  return Math.max(Math.floor(retentionMs / 2), SEGMENT_INTERVAL_MIN_MS);
}

/** How the segments of one store are made and unmade (in memory, or LMDB directories). */
export interface SegmentFactory {
  /** Segment ids found from an earlier run (persistent stores), in any order. */
  existing(): number[];
  open(segmentId: number): BytesKeyValueStore;
  /** Closes the segment and removes what it kept (its files). */
  destroy(segmentId: number, segment: BytesKeyValueStore): void;
  readonly persistent: boolean;
  /** The store's files were there before this run. */
  readonly reopened: boolean;
}

export interface SegmentedStoreOptions {
  retentionMs: number;
  /** The timestamp that places an entry (window start, session end), read from its engine key. */
  timestampOf(key: Buffer): number;
  segments: SegmentFactory;
}

export class SegmentedBytesStore implements BytesKeyValueStore {
  readonly persistent: boolean;
  readonly reopened: boolean;
  readonly intervalMs: number;
  /** Segment id -> engine, live segments only. */
  private readonly segments = new Map<number, BytesKeyValueStore>();
  private streamTimeMs = -1;
  /** Writes dropped because their segment had expired (Kafka's expired-window-record-drop metric). */
  expiredRecordsDropped = 0;
  segmentsDropped = 0;

  constructor(private readonly o: SegmentedStoreOptions) {
    assert.ok(o.retentionMs >= 0, `retention ${o.retentionMs} must not be negative`);
    this.intervalMs = segmentIntervalMs(o.retentionMs);
    this.persistent = o.segments.persistent;
    this.reopened = o.segments.reopened;
    // The segments found leave the stream time unknown (-1), as Kafka's store after openExisting: nothing is read
    // as expired or dropped until a write (or a restored changelog record) sets it.
    for (const id of o.segments.existing()) this.segments.set(id, o.segments.open(id));
  }

  /** The store's stream time: the largest timestamp put since it was opened (-1 before any). */
  get observedStreamTimeMs(): number {
    return this.streamTimeMs;
  }

  /** Live segment ids, oldest first. */
  segmentIds(): number[] {
    return [...this.segments.keys()].sort((a, b) => a - b);
  }

  private segmentId(timestampMs: number): number {
    return Math.floor(timestampMs / this.intervalMs);
  }

  get(key: Buffer): Buffer | null {
    const timestampMs = this.o.timestampOf(key);
    if (this.expired(timestampMs)) return null;
    return this.segments.get(this.segmentId(timestampMs))?.get(key) ?? null;
  }

  /** Older than the retention: kept until its segment goes, but no longer read (Kafka's getActualFrom). */
  private expired(timestampMs: number): boolean {
    return this.streamTimeMs >= 0 && timestampMs < this.streamTimeMs - this.o.retentionMs + 1;
  }

  put(key: Buffer, value: Buffer | null): void {
    const segment = this.segmentToWrite(key, value === null);
    if (segment === 'expired') this.expiredRecordsDropped++;
    else segment?.put(key, value);
  }

  /** A restored changelog record: as put, but a record of an expired segment is skipped without counting. */
  putRestored(key: Buffer, value: Buffer | null, timestamp: number | null): void {
    const segment = this.segmentToWrite(key, value === null);
    if (segment === 'expired' || segment === undefined) return;
    if (segment.putRestored !== undefined) segment.putRestored(key, value, timestamp);
    else
      segment.put(
        key,
        value === null || timestamp === null ? value : timestampedStoredValue(value, timestamp),
      );
  }

  /**
   * Deletes the entry from its segment if that segment is still there (Kafka's remove): stream time moves, no
   * segment is dropped or created, and nothing counts as dropped.
   */
  remove(key: Buffer): void {
    const timestampMs = this.o.timestampOf(key);
    if (timestampMs > this.streamTimeMs) this.streamTimeMs = timestampMs;
    this.segments.get(this.segmentId(timestampMs))?.put(key, null);
  }

  /**
   * Moves stream time to the key's timestamp if later and drops the segments it expires, then answers the key's
   * segment: 'expired' when it is older than the oldest live one, undefined for a delete from a segment that does
   * not exist (nothing there to delete), else the segment, opened if new.
   */
  private segmentToWrite(key: Buffer, isDelete: boolean): BytesKeyValueStore | 'expired' | undefined {
    const timestampMs = this.o.timestampOf(key);
    if (timestampMs > this.streamTimeMs) this.streamTimeMs = timestampMs;
    const minLiveSegment = this.segmentId(Math.max(0, this.streamTimeMs - this.o.retentionMs));
    const id = this.segmentId(timestampMs);
    this.dropSegmentsBefore(minLiveSegment);
    if (id < minLiveSegment) return 'expired';
    let segment = this.segments.get(id);
    if (segment === undefined && !isDelete) {
      segment = this.o.segments.open(id);
      this.segments.set(id, segment);
    }
    return segment;
  }

  private dropSegmentsBefore(minLiveSegment: number): void {
    for (const [id, segment] of this.segments) {
      if (id >= minLiveSegment) continue;
      this.segments.delete(id);
      this.o.segments.destroy(id, segment);
      this.segmentsDropped++;
    }
  }

  range(from: Buffer | null, to: Buffer | null): BytesEntry[] {
    const out: BytesEntry[] = [];
    for (const segment of this.segments.values())
      for (const e of segment.range(from, to)) if (!this.expired(this.o.timestampOf(e.key))) out.push(e);
    // The key comes first in every layout, so one key's entries sit in several segments: merge them.
    return this.segments.size > 1 ? out.sort((a, b) => Buffer.compare(a.key, b.key)) : out;
  }

  count(): number {
    let n = 0;
    for (const segment of this.segments.values()) n += segment.count();
    return n;
  }

  flush(): void {
    for (const segment of this.segments.values()) segment.flush();
  }

  close(): void {
    for (const segment of this.segments.values()) segment.close();
    this.segments.clear();
  }
}
