// The offsets of Kafka's oldest consumers (OffsetCommit v0 and OffsetFetch v0), which Kafka's broker keeps in
// ZooKeeper rather than in __consumer_offsets (KafkaApis' commitOffsetsToZookeeper and
// handleOffsetFetchRequestFromZookeeper): one node per partition, /consumers/<group>/offsets/<topic>/<partition>,
// holding the offset as decimal text. Brook keeps them at the same paths of its coordination store. These offsets
// are apart from a group's: v1+ requests neither see nor change them, and no group membership is checked.

import { ANY_VERSION, type CoordinationStore, type StoreResult } from '../controller/store/store.js';
import { ensurePath } from '../controller/zk-layout/bootstrap.js';
import { CONSUMERS_PATH } from '../controller/zk-layout/paths.js';

export class ZooKeeperConsumerOffsets {
  constructor(private readonly store: CoordinationStore) {}

  /** Sets the partition's offset, creating its node and parents the first time; the store's failure otherwise. */
  async commit(
    group: string,
    topic: string,
    partition: number,
    offset: bigint,
  ): Promise<StoreResult<unknown>> {
    const path = offsetPath(group, topic, partition);
    const data = new TextEncoder().encode(offset.toString());
    const set = await this.store.set(path, data, ANY_VERSION);
    if (set.ok || set.code !== 'NONODE') return set;
    const parents = await ensurePath(this.store, path.slice(0, path.lastIndexOf('/')));
    if (!parents.ok) return parents;
    const created = await this.store.create(path, data, 'persistent');
    // Another commit created it first: write over it, as the set above would have.
    return created.ok || created.code !== 'NODEEXISTS' ? created : this.store.set(path, data, ANY_VERSION);
  }

  /** The partition's offset, null when none was committed; the store's failure otherwise. */
  async fetch(group: string, topic: string, partition: number): Promise<StoreResult<bigint | null>> {
    const node = await this.store.get(offsetPath(group, topic, partition));
    if (!node.ok) return node.code === 'NONODE' ? { ok: true, value: null } : node;
    const text = new TextDecoder().decode(node.value.data).trim();
    return { ok: true, value: /^-?\d+$/.test(text) ? BigInt(text) : null };
  }
}

function offsetPath(group: string, topic: string, partition: number): string {
  return `${CONSUMERS_PATH}/${group}/offsets/${topic}/${partition}`;
}
