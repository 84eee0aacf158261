// Source offsets in offset.storage.topic (Kafka's KafkaOffsetBackingStore): compacted, offset.storage.partitions
// partitions, the key the JSON array ["<connector>", {partition}] and the value the offset's JSON, both as
// JsonConverter writes them without schemas (offset-store.ts makes the texts), a tombstone for a removed
// partition. Every worker reads the whole topic and follows it; a worker about to start a source task reads it
// to its end first (refresh()), so a task moved from a dead worker resumes from the last offsets that worker
// committed.

import type { ConsumerRecord } from '../../../client/index.js';
import type { SourceOffset, SourcePartition } from '../../api/records.js';
import { parseJson, stringifyJson } from '../../converters/json-text.js';
import { OffsetTable, offsetKey } from '../offset-store.js';
import type { KafkaBasedLog, LogOpener } from './kafka-based-log.js';

export class TopicOffsetStore extends OffsetTable {
  // The offsets' keys are stored re-serialized (see apply), so that equal keys compare equal.
  private readonly log: KafkaBasedLog;

  constructor(open: LogOpener) {
    super();
    this.log = open((r) => this.apply(r));
  }

  start(): Promise<void> {
    return this.log.start();
  }

  /** `closeTimeoutMs` bounds the close of the log's clients (KafkaBasedLog.stop). */
  stop(closeTimeoutMs?: number): Promise<void> {
    return this.log.stop(closeTimeoutMs);
  }

  refresh(): Promise<void> {
    return this.log.readToEnd();
  }

  private apply(r: ConsumerRecord): void {
    if (r.key === null) return;
    const key = parseJson(r.key.toString('utf8'));
    if (!Array.isArray(key) || key.length !== 2 || typeof key[0] !== 'string') return;
    const k = offsetKey(key[0], key[1] as SourcePartition);
    if (r.value === null) this.data.delete(k);
    else this.data.set(k, r.value.toString('utf8'));
  }

  async write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    // All sent at once (the producer keeps each key's order); held here only once every one is acknowledged.
    const records = entries.map((e) => ({
      key: offsetKey(connector, e.partition),
      value: e.offset === null ? null : stringifyJson(e.offset),
    }));
    await Promise.all(
      records.map((r) =>
        this.log.sendBytes(
          Buffer.from(r.key, 'utf8'),
          r.value === null ? null : Buffer.from(r.value, 'utf8'),
        ),
      ),
    );
    for (const r of records) {
      if (r.value === null) this.data.delete(r.key);
      else this.data.set(r.key, r.value);
    }
  }
}
