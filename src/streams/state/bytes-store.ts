// The bottom of a key-value store stack: bytes in, bytes out, keys ordered by their bytes. Two engines implement
// it: in memory (a Map, sorted when iterated) and LMDB (lmdb-store.ts). Writes made by a task between commits
// may stay in the engine's own buffers until flush(), which the task calls before it commits its offsets.

export interface BytesEntry {
  key: Buffer;
  value: Buffer;
}

export interface BytesKeyValueStore {
  readonly persistent: boolean;
  /** A persistent store whose files were there before this run (its checkpoint, if any, describes them). */
  readonly reopened?: boolean;
  get(key: Buffer): Buffer | null;
  /** null deletes. */
  put(key: Buffer, value: Buffer | null): void;
  /**
   * A changelog record applied during restoration (or by a standby): like put, but the key and value may be
   * views into a fetched response, which the engine may hold until it writes them, and with `timestamp` not
   * null the stored value is that timestamp's 8 big-endian bytes followed by `value` (a timestamped store; a
   * null value still deletes). Engines without a cheaper path than put leave it out.
   */
  putRestored?(key: Buffer, value: Buffer | null, timestamp: number | null): void;
  /**
   * Deletes the key without writing (Kafka's remove of a session store): window and session engines neither drop
   * segments nor count an expired key as a dropped record, as their null put does. Others leave it out: put(key,
   * null) deletes.
   */
  remove?(key: Buffer): void;
  /** Inclusive bounds; null for open. */
  range(from: Buffer | null, to: Buffer | null): BytesEntry[];
  count(): number;
  flush(): void;
  close(): void;
}

/**
 * A store whose changelog was truncated past its position (a corrupted task's state): Kafka wipes it only under
 * exactly-once (StateManagerUtil.closeStateManager); under at_least_once a persistent store keeps its contents and
 * the changelog is replayed over them, while an in-memory one would be gone with a dirty close anyway. Empties
 * `engine` when so, and says whether it did.
 */
export function wipeCorruptedState(engine: BytesKeyValueStore, exactlyOnce: boolean): boolean {
  const wipe = exactlyOnce || !engine.persistent;
  if (wipe) for (const e of engine.range(null, null)) engine.put(e.key, null);
  return wipe;
}

/**
 * Keys are held as latin1 strings: a bijection with bytes that a Map can hash, and whose string order (UTF-16
 * code units, each a byte here) is the keys' byte order, so range() filters and sorts the strings and builds key
 * Buffers only for what it returns. The map holds the value alone: a put (and a restored changelog record) costs
 * one string and one map entry, not also a copy of the key and an entry object, which during restoration were
 * most of the engine's time and half of what the garbage collector had to move (bench/README.md).
 */
export class InMemoryBytesStore implements BytesKeyValueStore {
  readonly persistent = false;
  private readonly map = new Map<string, Buffer>();

  get(key: Buffer): Buffer | null {
    return this.map.get(key.toString('latin1')) ?? null;
  }

  put(key: Buffer, value: Buffer | null): void {
    const k = key.toString('latin1');
    if (value === null) this.map.delete(k);
    else this.map.set(k, value);
  }

  range(from: Buffer | null, to: Buffer | null): BytesEntry[] {
    const lo = from === null ? null : from.toString('latin1');
    const hi = to === null ? null : to.toString('latin1');
    const keys: string[] = [];
    for (const k of this.map.keys()) {
      if (lo !== null && k < lo) continue;
      if (hi !== null && k > hi) continue;
      keys.push(k);
    }
    keys.sort();
    return keys.map((k) => ({ key: Buffer.from(k, 'latin1'), value: this.map.get(k)! }));
  }

  count(): number {
    return this.map.size;
  }

  flush(): void {}

  close(): void {
    this.map.clear();
  }
}
