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
   * views into a fetched response, which the engine may hold until it writes them. Engines without a cheaper
   * path than put leave it out.
   */
  putRestored?(key: Buffer, value: Buffer | null): void;
  /** Inclusive bounds; null for open. */
  range(from: Buffer | null, to: Buffer | null): BytesEntry[];
  count(): number;
  flush(): void;
  close(): void;
}

/** Keys are held as latin1 strings: a bijection with bytes that a Map can hash. */
export class InMemoryBytesStore implements BytesKeyValueStore {
  readonly persistent = false;
  private readonly map = new Map<string, BytesEntry>();

  get(key: Buffer): Buffer | null {
    return this.map.get(key.toString('latin1'))?.value ?? null;
  }

  put(key: Buffer, value: Buffer | null): void {
    const k = key.toString('latin1');
    if (value === null) this.map.delete(k);
    else this.map.set(k, { key: Buffer.from(key), value });
  }

  range(from: Buffer | null, to: Buffer | null): BytesEntry[] {
    const out: BytesEntry[] = [];
    for (const e of this.map.values()) {
      if (from !== null && Buffer.compare(e.key, from) < 0) continue;
      if (to !== null && Buffer.compare(e.key, to) > 0) continue;
      out.push(e);
    }
    return out.sort((a, b) => Buffer.compare(a.key, b.key));
  }

  count(): number {
    return this.map.size;
  }

  flush(): void {}

  close(): void {
    this.map.clear();
  }
}
