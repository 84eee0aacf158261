// The buffer of suppress() (Kafka's InMemoryTimeOrderedKeyValueChangeBuffer): the updates a suppression holds,
// one entry per key, ordered by buffer time (the window end for untilWindowCloses, the first buffered record's
// time for untilTimeLimit), then by key bytes. It lives in memory and is logged to its changelog
// `<application.id>-<store>-changelog`, so a task that moves or crashes finds its held updates again.
//
// Logging, as Kafka: a put or an eviction only marks the key dirty; at commit (Task.flushCaches, before the
// producer is flushed and the offsets committed) each dirty key is logged once: its entry if it is still
// buffered, else a tombstone (an entry added and emitted between two commits leaves just the tombstone).
// Under exactly_once_v2 these records share the transaction of the output and the offsets, so the buffer
// restored after a crash is the one that matches the committed input position.
//
// Changelog value (Kafka's version 3, header "v" = [3]): the record context (8-byte timestamp, 8-byte offset,
// int32-prefixed topic, int32 partition, int32 header count, then each header as an int32-prefixed key and an
// int32-prefixed value, -1 for null), the prior value, the old value (-2 when it is the prior value), the new
// value (each int32-prefixed, -1 for null), then the 8-byte buffer time. The key is the serialized key. The
// prior value is the old value of the key's first buffered update: the emitted change spans every held update.
//
// Each changelog record has the wall clock as its timestamp (Kafka's buffer sends none, so its producer stamps
// its own clock), not the record's being processed; a value has the header "v" = [3], a tombstone no header.
//
// Restoration applies the changelog in order: a tombstone removes the key, a value puts the entry read in the
// format its "v" header names (Kafka's versions 3, 2, 1 and 0, so a changelog written by any Kafka Streams
// since 2.1 restores); a key already buffered keeps its place (Kafka's non-resetting put).
//
// Size, as Kafka counts it for BufferConfig.maxBytes (computeRecordSize of its in-memory buffer): per entry 8
// (buffer time) + key bytes + prior + old (not counted when it equals the prior) + new + the record context (8
// timestamp, 8 offset, the topic's length in UTF-16 units, 4 partition, each header's key length in UTF-16
// units and value bytes).

import assert from 'node:assert/strict';
import type { Header } from '../processor.js';
import type { Serde } from '../serdes.js';
import type { BytesEntry, BytesKeyValueStore } from './bytes-store.js';
import type { StateStore, ValueAndTimestamp } from './stores.js';

/** The changelog value format this buffer writes (Kafka's suppress changelog version 3). */
export const SUPPRESS_CHANGELOG_HEADERS: readonly Header[] = [{ key: 'v', value: Buffer.from([3]) }];

/** The "v" header values of the formats Kafka's buffer restores (no header: version 0). */
const V1 = Buffer.from([1]);
const V2 = Buffer.from([2]);
const V3 = Buffer.from([3]);

const NULL_LENGTH = -1;
/** The timestamp of a value whose time is not known (Kafka's RecordQueue.UNKNOWN). */
const UNKNOWN_TIMESTAMP = -1;
const OLD_IS_PRIOR = -2;

/** Where a buffered update came from: its record's metadata (Kafka's ProcessorRecordContext). */
export interface BufferedContext {
  timestamp: number;
  offset: number;
  topic: string;
  partition: number;
  headers: Header[];
}

export interface BufferedEntry {
  keyBytes: Buffer;
  /** Buffer time: entries leave in its order. */
  timeMs: number;
  prior: Buffer | null;
  old: Buffer | null;
  new: Buffer | null;
  context: BufferedContext;
}

/** Receives an evicted entry: (key, new value, prior value, context). */
export type EvictionHandler = (
  key: unknown,
  newValue: unknown,
  priorValue: unknown,
  context: BufferedContext,
) => void;

/** Sends one record to the buffer's changelog partition. */
export type SuppressChangelogSend = (key: Buffer, value: Buffer | null, headers: readonly Header[]) => void;

export function encodeBufferValue(e: BufferedEntry): Buffer {
  const topic = Buffer.from(e.context.topic, 'utf8');
  const parts: Buffer[] = [];
  const int = (n: number) => {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(n);
    parts.push(b);
  };
  const long = (n: number) => {
    const b = Buffer.allocUnsafe(8);
    b.writeBigInt64BE(BigInt(n));
    parts.push(b);
  };
  const bytes = (b: Buffer | null) => {
    if (b === null) return int(NULL_LENGTH);
    int(b.length);
    parts.push(b);
  };
  long(e.context.timestamp);
  long(e.context.offset);
  bytes(topic);
  int(e.context.partition);
  int(e.context.headers.length);
  for (const h of e.context.headers) {
    bytes(Buffer.from(h.key, 'utf8'));
    bytes(h.value);
  }
  bytes(e.prior);
  if (e.old !== null && e.prior !== null && e.old.equals(e.prior)) int(OLD_IS_PRIOR);
  else bytes(e.old);
  bytes(e.new);
  long(e.timeMs);
  return Buffer.concat(parts);
}

/**
 * Reads Kafka's buffer encodings front to back; a read past the end throws (Kafka's BufferUnderflowException).
 */
class ValueReader {
  private at = 0;

  constructor(private readonly value: Buffer) {}

  private need(n: number): void {
    if (this.at + n > this.value.length)
      throw new Error(`suppress changelog value truncated at byte ${this.at}`);
  }

  int(): number {
    this.need(4);
    const n = this.value.readInt32BE(this.at);
    this.at += 4;
    return n;
  }

  long(): number {
    this.need(8);
    const n = Number(this.value.readBigInt64BE(this.at));
    this.at += 8;
    return n;
  }

  /** `length` bytes, null for -1 (Kafka's getNullableArray). */
  sized(length: number): Buffer | null {
    if (length === NULL_LENGTH) return null;
    if (length < 0) throw new Error(`suppress changelog value: bad length ${length}`);
    this.need(length);
    const b = Buffer.from(this.value.subarray(this.at, this.at + length));
    this.at += length;
    return b;
  }

  /** An int32-prefixed array, null for -1 (Kafka's getNullableSizePrefixedArray). */
  prefixed(): Buffer | null {
    return this.sized(this.int());
  }

  /** ProcessorRecordContext.deserialize (a header count of -1, from old versions, is no headers). */
  context(): BufferedContext {
    const timestamp = this.long();
    const offset = this.long();
    const topic = this.prefixed();
    if (topic === null) throw new Error('suppress changelog value: null topic');
    const partition = this.int();
    const headerCount = this.int();
    const headers: Header[] = [];
    for (let i = 0; i < headerCount; i++) {
      const key = this.prefixed();
      if (key === null) throw new Error('suppress changelog value: null header key');
      headers.push({ key: key.toString('utf8'), value: this.prefixed() });
    }
    return { timestamp, offset, topic: topic.toString('utf8'), partition, headers };
  }

  /** FullChangeSerde's legacy array (old, then new, each int32-prefixed) inside an int32-prefixed array. */
  legacyChange(): { old: Buffer | null; new: Buffer | null } {
    const array = this.prefixed();
    if (array === null) throw new Error('suppress changelog value: null change');
    return new ValueReader(array).legacyChangeInline();
  }

  /** FullChangeSerde's legacy array read in place: old, then new, each int32-prefixed. */
  legacyChangeInline(): { old: Buffer | null; new: Buffer | null } {
    const old = this.prefixed();
    return { old, new: this.prefixed() };
  }

  end(): void {
    if (this.at !== this.value.length)
      throw new Error(`suppress changelog value: ${this.value.length - this.at} bytes left over`);
  }
}

/** Kafka's changelog value version 3 (BufferValue + buffer time), the one this buffer writes. */
export function decodeBufferValue(keyBytes: Buffer, value: Buffer): BufferedEntry {
  const r = new ValueReader(value);
  const context = r.context();
  const prior = r.prefixed();
  const oldLength = r.int();
  const old = oldLength === OLD_IS_PRIOR ? prior : r.sized(oldLength);
  const newValue = r.prefixed();
  const timeMs = r.long();
  r.end();
  return { keyBytes, timeMs, prior, old, new: newValue, context };
}

/** One record of the buffer's changelog, as the restore consumer hands it. */
export interface ChangelogRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly Header[];
}

/**
 * Version 2 (Kafka 2.3): context, the int32-prefixed legacy change, the prior value, the buffer time. Kafka
 * 2.4.0 to 2.5.0 wrote version 3 values under the "v" = [2] header, so a value that does not read as version 2
 * is read as version 3 (Kafka's duckTypeV2).
 */
function decodeV2(keyBytes: Buffer, value: Buffer): BufferedEntry {
  let v2Error: unknown;
  try {
    const r = new ValueReader(value);
    const context = r.context();
    const change = r.legacyChange();
    const prior = r.prefixed();
    const timeMs = r.long();
    return { keyBytes, timeMs, prior, old: change.old, new: change.new, context };
  } catch (e) {
    v2Error = e;
  }
  try {
    return decodeBufferValue(keyBytes, value);
  } catch (v3Error) {
    throw new Error(
      `suppress changelog value of version 2 reads neither as version 2 (${(v2Error as Error).message}) nor as version 3 (${(v3Error as Error).message})`,
    );
  }
}

/**
 * Version 1 (buffer time, context, the int32-prefixed legacy change) or 0 (buffer time, the legacy change; the
 * context is the changelog record's own). Neither carries a prior value: Kafka takes the buffered entry's
 * prior when it is not null, else the old value.
 */
function decodeLegacy(
  keyBytes: Buffer,
  record: ChangelogRecord,
  hasContext: boolean,
  bufferedPrior: Buffer | null,
): BufferedEntry {
  const r = new ValueReader(record.value!);
  const timeMs = r.long();
  const context: BufferedContext = hasContext
    ? r.context()
    : {
        timestamp: record.timestamp,
        offset: record.offset,
        topic: record.topic,
        partition: record.partition,
        headers: record.headers.map((h) => ({ key: h.key, value: h.value })),
      };
  const change = hasContext ? r.legacyChange() : r.legacyChangeInline();
  return { keyBytes, timeMs, prior: bufferedPrior ?? change.old, old: change.old, new: change.new, context };
}

/**
 * The "v" header's value (its last occurrence, as Kafka's lastHeader), or null without one (version 0). A "v"
 * header with a null value names no version: empty, it fails restoration as Kafka's does.
 */
function formatVersion(headers: readonly Header[]): Buffer | null {
  for (let i = headers.length - 1; i >= 0; i--)
    if (headers[i]!.key === 'v') return headers[i]!.value ?? Buffer.alloc(0);
  return null;
}

/** An entry's size in Kafka's estimate (InMemoryTimeOrderedKeyValueChangeBuffer.computeRecordSize). */
export function entrySizeBytes(e: BufferedEntry): number {
  let size = 8 + e.keyBytes.length;
  size += e.prior?.length ?? 0;
  if (e.old !== null && (e.prior === null || !e.old.equals(e.prior))) size += e.old.length;
  size += e.new?.length ?? 0;
  size += 8 + 8 + e.context.topic.length + 4;
  for (const h of e.context.headers) size += h.key.length + (h.value?.length ?? 0);
  return size;
}

function compareEntries(a: BufferedEntry, b: BufferedEntry): number {
  return a.timeMs - b.timeMs || Buffer.compare(a.keyBytes, b.keyBytes);
}

export class SuppressBuffer implements StateStore {
  /** Entries in buffer-time order (then key bytes). */
  private sorted: BufferedEntry[] = [];
  /** Key bytes (latin1) -> its entry. */
  private readonly index = new Map<string, BufferedEntry>();
  /** Keys put or evicted since the last commit: each is logged once then. */
  private readonly dirty = new Set<string>();
  /** The sum of the buffered entries' sizes (entrySizeBytes). */
  private sizeBytes = 0;

  constructor(
    readonly name: string,
    readonly keySerde: Serde<unknown>,
    readonly valueSerde: Serde<unknown>,
    /** The topic handed to the serdes (the changelog topic, as Kafka's buffer does). */
    private readonly serdeTopic: string,
    private readonly changelog: SuppressChangelogSend | null,
  ) {}

  persistent(): boolean {
    return false;
  }

  get size(): number {
    return this.index.size;
  }

  /** Kafka's numRecords(): buffered keys. */
  numRecords(): number {
    return this.index.size;
  }

  /** Kafka's bufferSize(): the buffered entries' estimated bytes. */
  bufferSize(): number {
    return this.sizeBytes;
  }

  /** The smallest buffer time, or Infinity when empty. */
  minTimeMs(): number {
    return this.sorted.length === 0 ? Number.POSITIVE_INFINITY : this.sorted[0]!.timeMs;
  }

  private serializeKey(key: unknown): Buffer {
    const b = this.keySerde.serialize(this.serdeTopic, key);
    if (b === null) throw new Error(`suppress buffer ${this.name}: a key may not serialize to null`);
    return b;
  }

  private serializeValue(value: unknown): Buffer | null {
    return value === null || value === undefined ? null : this.valueSerde.serialize(this.serdeTopic, value);
  }

  /**
   * The suppressed view of a key (Kafka's priorValueForBuffered): while the key is buffered, the value it had
   * before its first held update, which is what downstream has seen; its timestamp is unknown (-1), as Kafka's.
   */
  priorValueForBuffered(
    key: unknown,
  ): { buffered: false } | { buffered: true; prior: ValueAndTimestamp<unknown> | null } {
    const e = this.index.get(this.serializeKey(key).toString('latin1'));
    if (e === undefined) return { buffered: false };
    if (e.prior === null) return { buffered: true, prior: null };
    const value = this.valueSerde.deserialize(this.serdeTopic, e.prior);
    return { buffered: true, prior: value === null ? null : { value, timestamp: UNKNOWN_TIMESTAMP } };
  }

  /** Buffers an update of `key` (Kafka's put): the first one fixes the buffer time and the prior value. */
  put(timeMs: number, key: unknown, newValue: unknown, oldValue: unknown, context: BufferedContext): void {
    const keyBytes = this.serializeKey(key);
    const old = this.serializeValue(oldValue);
    const id = keyBytes.toString('latin1');
    const previous = this.index.get(id);
    this.cleanPut({
      keyBytes,
      timeMs,
      prior: previous === undefined ? old : previous.prior,
      old,
      new: this.serializeValue(newValue),
      context,
    });
    this.dirty.add(id);
  }

  /** Inserts, or replaces in place a buffered key's entry (its buffer time stays). */
  private cleanPut(e: BufferedEntry): void {
    const id = e.keyBytes.toString('latin1');
    const previous = this.index.get(id);
    if (previous !== undefined) {
      const at = this.position(previous);
      const entry = { ...e, timeMs: previous.timeMs };
      this.sorted[at] = entry;
      this.index.set(id, entry);
      this.sizeBytes += entrySizeBytes(entry) - entrySizeBytes(previous);
      return;
    }
    this.sorted.splice(this.lowerBound(e), 0, e);
    this.index.set(id, e);
    this.sizeBytes += entrySizeBytes(e);
  }

  /** The index of a buffered entry in `sorted`. */
  private position(e: BufferedEntry): number {
    const at = this.lowerBound(e);
    assert.ok(this.sorted[at] === e, `suppress buffer ${this.name}: entry not where its order puts it`);
    return at;
  }

  /** The first index in `sorted` whose entry does not order before `e` (binary search on time, then key). */
  private lowerBound(e: BufferedEntry): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(this.sorted[mid]!, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private remove(id: string): void {
    const e = this.index.get(id);
    if (e === undefined) return;
    this.sorted.splice(this.position(e), 1);
    this.index.delete(id);
    this.sizeBytes -= entrySizeBytes(e);
  }

  /**
   * Takes out, in buffer-time order, every entry whose buffer time is at most `limitMs`, and hands each to
   * `emit` as (key, new value, prior value, context). The keys become dirty: their tombstones go out at commit.
   */
  evictUpTo(limitMs: number, emit: EvictionHandler): void {
    this.evictWhile((head) => head.timeMs <= limitMs, emit);
  }

  /**
   * Kafka's evictWhile: takes out entries from the head (oldest buffer time first) while `more(head)` holds,
   * asked again before each one with numRecords() and bufferSize() already counting the entries taken, then
   * hands them to `emit` in that order. The keys become dirty: their tombstones go out at commit.
   */
  evictWhile(more: (head: BufferedEntry) => boolean, emit: EvictionHandler): void {
    let n = 0;
    while (n < this.sorted.length && more(this.sorted[n]!)) {
      const e = this.sorted[n]!;
      const id = e.keyBytes.toString('latin1');
      this.index.delete(id);
      this.dirty.add(id);
      this.sizeBytes -= entrySizeBytes(e);
      n++;
    }
    if (n === 0) return;
    const due = this.sorted.splice(0, n);
    for (const e of due)
      emit(
        this.keySerde.deserialize(this.serdeTopic, e.keyBytes),
        e.new === null ? null : this.valueSerde.deserialize(this.serdeTopic, e.new),
        e.prior === null ? null : this.valueSerde.deserialize(this.serdeTopic, e.prior),
        e.context,
      );
  }

  /** Logs each dirty key once (its entry, or a tombstone if it left); called at every commit. */
  logDirty(): void {
    if (this.changelog === null) {
      this.dirty.clear();
      return;
    }
    for (const id of this.dirty) {
      const e = this.index.get(id);
      if (e === undefined) this.changelog(Buffer.from(id, 'latin1'), null, []);
      else this.changelog(e.keyBytes, encodeBufferValue(e), SUPPRESS_CHANGELOG_HEADERS);
    }
    this.dirty.clear();
  }

  /**
   * Applies one changelog record during restoration in the format its "v" header names (Kafka's restoreBatch):
   * 3 (this buffer's), 2 (or 3 under a 2 header), 1 (buffer time, context, legacy change) or none (version 0:
   * buffer time, legacy change; the context is the changelog record's own). Versions 0 and 1 carry no prior
   * value (decodeLegacy). Another version throws, as Kafka's "Restoring apparently invalid changelog record".
   */
  restoreRecord(record: ChangelogRecord): void {
    assert.ok(record.key !== null, `suppress buffer ${this.name}: a changelog record without a key`);
    const keyBytes = Buffer.from(record.key);
    const id = keyBytes.toString('latin1');
    if (record.value === null) {
      this.remove(id);
      return;
    }
    const version = formatVersion(record.headers);
    if (version?.equals(V3)) this.cleanPut(decodeBufferValue(keyBytes, record.value));
    else if (version?.equals(V2)) this.cleanPut(decodeV2(keyBytes, record.value));
    else if (version === null || version.equals(V1))
      this.cleanPut(decodeLegacy(keyBytes, record, version !== null, this.index.get(id)?.prior ?? null));
    else
      throw new Error(
        `suppress buffer ${this.name}: restoring apparently invalid changelog record (${record.topic}-${record.partition} offset ${record.offset}, version header ${version.toString('hex')})`,
      );
  }

  /** Applies one version-3 changelog value (or tombstone) during restoration (never marks a key dirty). */
  restore(keyBytes: Buffer, value: Buffer | null): void {
    const id = keyBytes.toString('latin1');
    if (value === null) this.remove(id);
    else this.cleanPut(decodeBufferValue(Buffer.from(keyBytes), value));
  }

  /** The buffer as the bytes engine that restoration writes into (get/range read the logged form). */
  restoreTarget(): BytesKeyValueStore {
    const entries = (): BytesEntry[] =>
      this.sorted.map((e) => ({ key: e.keyBytes, value: encodeBufferValue(e) }));
    return {
      persistent: false,
      get: (key) => {
        const e = this.index.get(key.toString('latin1'));
        return e === undefined ? null : encodeBufferValue(e);
      },
      put: (key, value) => this.restore(key, value),
      range: (from, to) =>
        entries()
          .filter(
            (e) =>
              (from === null || Buffer.compare(e.key, from) >= 0) &&
              (to === null || Buffer.compare(e.key, to) <= 0),
          )
          .sort((a, b) => Buffer.compare(a.key, b.key)),
      count: () => this.index.size,
      flush: () => {},
      close: () => {},
    };
  }

  flush(): void {}

  close(): void {
    this.sorted = [];
    this.index.clear();
    this.dirty.clear();
    this.sizeBytes = 0;
  }
}
