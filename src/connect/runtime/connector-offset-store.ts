// The offsets of a source connector with its own offsets topic (KIP-618's `offsets.storage.topic`, Kafka's
// ConnectorOffsetBackingStore): reads prefer the connector's topic and fall back to the worker's global one (where
// the connector's offsets were before it had a topic of its own); writes go to the connector's topic first, then
// to the global one, so tools that read only the global topic still see them. With exactly-once, the write to the
// connector's topic is part of the task's transaction and only the global copy goes through write(). Without a
// secondary (the connector's topic is the worker's, Kafka's withOnlyConnectorStore) the primary is the only one.

import type { SourceOffset, SourcePartition } from '../api/records.js';
import type { OffsetStore } from './offset-store.js';

export class ConnectorOffsetStore implements OffsetStore {
  constructor(
    readonly primary: OffsetStore,
    readonly secondary: OffsetStore | null,
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

  async write(
    connector: string,
    entries: { partition: SourcePartition; offset: SourceOffset | null }[],
  ): Promise<void> {
    await this.primary.write(connector, entries);
    await this.secondary?.write(connector, entries);
  }

  async refresh(): Promise<void> {
    await Promise.all([this.primary.refresh?.(), this.secondary?.refresh?.()]);
  }
}
