// Source offsets: per connector, the last committed offset of each source partition. Keys and values are
// Kafka Connect's: the key is the JSON array ["<connector>", <partition>] and the value the offset's JSON, both
// as JsonConverter writes them with schemas disabled, so that the distributed store (the offset topic) holds
// records Kafka's tools read. The standalone store keeps them in offset.storage.file.filename; Kafka writes that
// file with Java serialization, Brook as a JSON object of those key and value texts (written to a temporary
// file, synced, then renamed, so a crash leaves the old or the new content).

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { OffsetStorageReader } from '../api/connector.js';
import type { SourceOffset, SourcePartition } from '../api/records.js';
import { parseJson, stringifyJson } from '../converters/json-text.js';

export interface OffsetStore {
  get(connector: string, partition: SourcePartition): SourceOffset | null;
  /** Every stored partition of a connector with its offset. */
  list(connector: string): { partition: SourcePartition; offset: SourceOffset | null }[];
  /** Writes offsets durably (a null offset removes the partition). */
  write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void>;
  /** Whether the store holds the partition (a removed one included until it is forgotten). */
  has(connector: string, partition: SourcePartition): boolean;
  /**
   * Opens what the store holds for the one that asked for it (a task's own offsets topic clients), before its first
   * read; release() frees it. A shared store (the worker's, opened by the herder) has none: a task never opens it.
   */
  acquire?(): Promise<void>;
  /** Reads what other workers wrote, to the end (stores kept in a topic). */
  refresh?(): Promise<void>;
  /** Frees what the store holds for the one that asked for it (a task's own offsets topic clients). */
  release?(): Promise<void>;
}

export function offsetKey(connector: string, partition: SourcePartition): string {
  return stringifyJson([connector, partition]);
}

/**
 * The offsets a store holds, as the key and value texts above, and the reads every store answers the same way
 * from them; each store says how it loads and writes them durably.
 */
export abstract class OffsetTable implements OffsetStore {
  protected readonly data = new Map<string, string>();

  has(connector: string, partition: SourcePartition): boolean {
    return this.data.has(offsetKey(connector, partition));
  }

  get(connector: string, partition: SourcePartition): SourceOffset | null {
    const v = this.data.get(offsetKey(connector, partition));
    return v === undefined ? null : (parseJson(v) as SourceOffset);
  }

  list(connector: string): { partition: SourcePartition; offset: SourceOffset | null }[] {
    const out: { partition: SourcePartition; offset: SourceOffset | null }[] = [];
    for (const [k, v] of this.data) {
      const key = parseJson(k) as [string, SourcePartition];
      if (key[0] === connector) out.push({ partition: key[1], offset: parseJson(v) as SourceOffset });
    }
    return out;
  }

  abstract write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void>;
}

export class FileOffsetStore extends OffsetTable {
  constructor(private readonly path: string) {
    super();
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (text.trim() === '') return;
    const stored = JSON.parse(text) as Record<string, string>;
    for (const [k, v] of Object.entries(stored)) this.data.set(k, v);
  }

  async write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    for (const e of entries) {
      const k = offsetKey(connector, e.partition);
      if (e.offset === null) this.data.delete(k);
      else this.data.set(k, stringifyJson(e.offset));
    }
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, JSON.stringify(Object.fromEntries(this.data)));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }
}

export function storageReader(store: OffsetStore, connector: string): OffsetStorageReader {
  return {
    offset: (partition) => store.get(connector, partition),
    offsets: (partitions) => new Map(partitions.map((p) => [p, store.get(connector, p)])),
  };
}
