// The offsets of a source connector with its own offsets topic (KIP-618's `offsets.storage.topic`, Kafka's
// ConnectorOffsetBackingStore): reads prefer the connector's topic and fall back to the worker's global one (where
// the connector's offsets were before it had a topic of its own); writes go to the connector's topic first, then
// to the global one, so tools that read only the global topic still see them (tombstones to the global one first:
// see writeWith). That copy is not awaited and its failure is a warning: the write is done once the connector's topic
// holds it. With exactly-once, the write to the connector's topic is a transaction (writeWith): a task's commit
// (ExactlyOnceWorkerSourceTask), or, for an offsets change, a transaction of its own.
// Without a secondary (the connector's topic is the worker's, Kafka's withOnlyConnectorStore) the primary is the
// only one.

import type { Logger } from '../../common/logger.js';
import type { SourceOffset, SourcePartition } from '../api/records.js';
import type { OffsetStore } from './offset-store.js';

type OffsetEntry = { partition: SourcePartition; offset: SourceOffset | null };

export class ConnectorOffsetStore implements OffsetStore {
  constructor(
    readonly primary: OffsetStore,
    readonly secondary: OffsetStore | null,
    /** Kafka's ConnectorOffsetBackingStore logger: a failed copy to the secondary is a warning there. */
    private readonly log: Logger,
    /** Stops the primary store when it is its holder's alone (a task's), else nothing. */
    private readonly onRelease: () => Promise<void> = async () => {},
    /** Opens the primary store when it is its holder's alone (a task's, when it starts), else nothing. */
    private readonly onAcquire: () => Promise<void> = async () => {},
  ) {}

  acquire(): Promise<void> {
    return this.onAcquire();
  }

  release(): Promise<void> {
    return this.onRelease();
  }

  has(connector: string, partition: SourcePartition): boolean {
    return this.primary.has(connector, partition) || (this.secondary?.has(connector, partition) ?? false);
  }

  get(connector: string, partition: SourcePartition): SourceOffset | null {
    if (this.primary.has(connector, partition) || this.secondary === null)
      return this.primary.get(connector, partition);
    return this.secondary.get(connector, partition);
  }

  list(connector: string): { partition: SourcePartition; offset: SourceOffset | null }[] {
    const out = this.primary.list(connector);
    for (const e of this.secondary?.list(connector) ?? [])
      if (!this.primary.has(connector, e.partition)) out.push(e);
    return out;
  }

  write(connector: string, entries: OffsetEntry[]): Promise<void> {
    return this.writeWith(connector, entries, (all) => this.primary.write(connector, all));
  }

  /**
   * Writes through `writePrimary` for the primary store (an exactly-once task's commit or offsets change writes
   * it in a transaction), in Kafka's ConnectorOffsetBackingStore.set order: with a secondary, its tombstones first, so a
   * partition reset in the primary cannot fall back to an offset the secondary still holds (a failure there
   * writes nothing), then every entry to the primary, then the other entries to the secondary. That last copy
   * is started, not awaited, and a failure of it only logged (Kafka's setPrimaryThenSecondary completes the write
   * with the primary's result): the offsets are written once the primary holds them, and a global topic that
   * refuses or stalls must neither fail nor hold an offsets change or a task's commit.
   */
  async writeWith(
    connector: string,
    entries: OffsetEntry[],
    writePrimary: (entries: OffsetEntry[]) => Promise<void>,
  ): Promise<void> {
    const tombstones = entries.filter((e) => e.offset === null);
    if (this.secondary !== null && tombstones.length > 0) await this.secondary.write(connector, tombstones);
    await writePrimary(entries);
    const regular = entries.filter((e) => e.offset !== null);
    if (this.secondary !== null && regular.length > 0)
      this.copyToSecondary(this.secondary, connector, regular);
  }

  private copyToSecondary(secondary: OffsetStore, connector: string, entries: OffsetEntry[]): void {
    const warn = (err: unknown) =>
      this.log.warn(
        `Failed to write offsets to secondary backing store (connector ${connector}): ${(err as Error).message}`,
      );
    try {
      secondary.write(connector, entries).catch(warn);
    } catch (err) {
      warn(err);
    }
  }

  async refresh(): Promise<void> {
    await Promise.all([this.primary.refresh?.(), this.secondary?.refresh?.()]);
  }
}
