// Producer ids for InitProducerId, unique across brokers and restarts: the broker takes blocks of ids from the
// coordination store's /latest_producer_id_block with a conditional write (as Kafka's ZooKeeper mode does) and
// hands them out one by one. Concurrent callers share one block request.

import type { BrokerId, ProducerId } from '../common/ids.js';
import type { CoordinationStore } from '../controller/store/store.js';
import { PRODUCER_ID_BLOCK_PATH } from '../controller/zk-layout/paths.js';
import { decodeProducerIdBlock, encodeProducerIdBlock } from '../controller/zk-layout/producer-id-block.js';

/** Kafka's block size. */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
const ATTEMPTS_MAX = 10;

export class ProducerIdManager {
  private next = 0;
  private end = -1;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly store: CoordinationStore,
    private readonly brokerId: number,
  ) {}

  async nextId(): Promise<number> {
    while (this.next > this.end) {
      this.pending ??= this.takeBlock().finally(() => {
        this.pending = null;
      });
      await this.pending;
    }
    return this.next++;
  }

  private async takeBlock(): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      const current = await this.store.get(PRODUCER_ID_BLOCK_PATH);
      let start = 0;
      let version = -1;
      if (current.ok && current.value.data.length === 0) {
        // Created empty with Kafka's persistent paths: no block has been taken yet.
        version = current.value.stat.version;
      } else if (current.ok) {
        const decoded = decodeProducerIdBlock(current.value.data);
        if (!decoded.ok) throw new Error(`bad ${PRODUCER_ID_BLOCK_PATH}: ${decoded.error.message}`);
        start = decoded.value.blockEnd + 1;
        version = current.value.stat.version;
      } else if (current.code !== 'NONODE') {
        throw new Error(`cannot read ${PRODUCER_ID_BLOCK_PATH}: ${current.code}`);
      }
      const block = encodeProducerIdBlock({
        brokerId: this.brokerId as BrokerId,
        blockStart: start as ProducerId,
        blockEnd: (start + PRODUCER_ID_BLOCK_SIZE - 1) as ProducerId,
      });
      const written =
        version < 0
          ? await this.store.create(PRODUCER_ID_BLOCK_PATH, block, 'persistent')
          : await this.store.set(PRODUCER_ID_BLOCK_PATH, block, version);
      if (written.ok) {
        this.next = start;
        this.end = start + PRODUCER_ID_BLOCK_SIZE - 1;
        return;
      }
      // Another broker took the block first (BADVERSION or NODEEXISTS): read again and take the next one.
    }
    throw new Error('could not take a producer id block: too much contention');
  }
}
