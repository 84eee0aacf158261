// The dirty-entry cache under every caching store (Kafka's ThreadCache and NamedCache): a store's writes wait here,
// one entry per cache id (the store's key bytes, with the window or session for those stores), until the thread
// commits (flush) or the thread's byte budget is exceeded (the cache that writes evicts its least recently written
// entries). Either way an entry leaves through the store's write-through, which puts it into the engine and the
// changelog and forwards it downstream. What the entry is, and how it is written, is the store's business.
//
// Order: a Map keeps insertion order and a rewritten id is deleted and re-inserted, so iteration is least recently
// written first, which is both the eviction order and the flush order, as in Kafka's NamedCache.
//
// The budget is shared by all the caches of one stream thread; it is only touched from that thread's loop.
//
// Each entry keeps the record context of the write that cached it (the record being processed: its input place,
// timestamp and headers), and its write-through runs within that context again and receives it, as Kafka's
// LRUCacheEntry carries its ProcessorRecordContext: what the flush forwards has the metadata and the headers of the
// record that last wrote the entry, not none.

import assert from 'node:assert/strict';
import type { Header } from '../processor.js';

/** The bytes a thread's caches may hold together (statestore.cache.max.bytes divided among the threads). */
export class CacheBudget {
  usedBytes = 0;
  constructor(readonly maxBytes: number) {
    assert.ok(maxBytes > 0, 'a cache budget must be positive');
  }
}

/** Per-entry overhead counted on top of the id and value bytes (object, map slot, timestamps). */
export const ENTRY_OVERHEAD_BYTES = 64;

/**
 * What a cached entry keeps of the record that wrote it, as its flush forwards it (the headers of Kafka's
 * LRUCacheEntry context); the task's capture may keep more (the input place), which only the task reads.
 */
export interface CapturedRecordContext {
  readonly headers: readonly Header[];
}

/**
 * What a flushed entry goes downstream as, besides its key and change: the timestamp and the headers of the record
 * that last wrote it (Kafka's flush forwards a Record made of the entry's context timestamp and headers).
 */
export interface FlushedRecord {
  readonly timestamp: number;
  readonly headers: readonly Header[];
}

/** The context of a write made with no task around it (a store used on its own): no headers. */
const NO_RECORD_CONTEXT: CapturedRecordContext = Object.freeze({ headers: Object.freeze([]) });

interface Slot<E> {
  entry: E;
  sizeBytes: number;
  /** The record context captured when the entry was cached. */
  context: CapturedRecordContext;
}

/** Captures the current record context and runs a write-through within a captured one (the task provides it). */
export interface CacheRecordContext {
  capture(): CapturedRecordContext;
  within(captured: CapturedRecordContext, write: () => void): void;
}

/**
 * One store's dirty entries under its thread's budget; `writeThrough` receives each entry as it leaves, with the
 * record context of its last write.
 */
export class RecordCache<E> {
  private readonly slots = new Map<string, Slot<E>>();

  constructor(
    private readonly budget: CacheBudget,
    private readonly writeThrough: (entry: E, context: CapturedRecordContext) => void,
    private readonly recordContext: CacheRecordContext | null = null,
  ) {}

  private writeWithin(slot: Slot<E>): void {
    if (this.recordContext === null) this.writeThrough(slot.entry, slot.context);
    else this.recordContext.within(slot.context, () => this.writeThrough(slot.entry, slot.context));
  }

  get size(): number {
    return this.slots.size;
  }

  /** The entry cached under `id`, or undefined when the store must be read. */
  get(id: string): E | undefined {
    return this.slots.get(id)?.entry;
  }

  /**
   * Caches `entry` under `id` as the most recently written, replacing an earlier write of the same id, then
   * evicts least recently written entries (this one too, if it alone is too big) while the budget is exceeded.
   * The entry counts the bytes of its id (latin1, one byte a character), `valueBytes` (its serialized value;
   * 0 for a deletion) and ENTRY_OVERHEAD_BYTES.
   */
  put(id: string, entry: E, valueBytes: number): void {
    assert.ok(valueBytes >= 0, 'a value has a size of zero or more bytes');
    const sizeBytes = id.length + valueBytes + ENTRY_OVERHEAD_BYTES;
    const previous = this.slots.get(id);
    if (previous !== undefined) {
      this.budget.usedBytes -= previous.sizeBytes;
      this.slots.delete(id); // re-inserted below: most recently written last
    }
    this.slots.set(id, { entry, sizeBytes, context: this.recordContext?.capture() ?? NO_RECORD_CONTEXT });
    this.budget.usedBytes += sizeBytes;
    while (this.budget.usedBytes > this.budget.maxBytes && this.slots.size > 0) this.evictOldest();
  }

  private evictOldest(): void {
    const [id, slot] = this.slots.entries().next().value as [string, Slot<E>];
    this.slots.delete(id);
    this.budget.usedBytes -= slot.sizeBytes;
    this.writeWithin(slot);
  }

  /**
   * Writes every entry through, least recently written first. The cache is emptied before the first write, so a
   * write-through that leads (downstream) to writes into this cache again starts a fresh generation of entries.
   */
  flush(): void {
    if (this.slots.size === 0) return;
    const slots = [...this.slots.values()];
    this.slots.clear();
    for (const slot of slots) {
      this.budget.usedBytes -= slot.sizeBytes;
      this.writeWithin(slot);
    }
  }

  /** The cached entries by id, least recently written first (for reads that lay the cache over the store). */
  *entries(): Generator<[string, E]> {
    for (const [id, slot] of this.slots) yield [id, slot.entry];
  }

  /** Drops every entry unwritten and gives its bytes back to the budget (the store closes). */
  drop(): void {
    for (const slot of this.slots.values()) this.budget.usedBytes -= slot.sizeBytes;
    this.slots.clear();
  }
}
