// Which partitions are in a transactional producer's open transaction, and the AddPartitionsToTxn requests that
// put them there, as Kafka's TransactionManager keeps newPartitionsInTransaction, pendingPartitionsInTransaction
// and partitionsInTransaction and its Sender sends the request. A partition's state lives on its queue
// (PartitionQueue.inTxn): TXN_NONE until it gets a record, TXN_PENDING until the coordinator has it in the
// transaction, then TXN_ADDED; the sender drains only TXN_ADDED partitions (sender.ts).
//
// One request carries every partition that got its first record in the same turn of the event loop or while the
// previous request was out; requests go one after another, never side by side. A failed request breaks the
// transaction (TransactionManager.fail): its records then fail and only an abort is left.
//
// Ownership: one per transactional producer, driven by it on the event loop (add on append, settled before
// EndTxn, reset when a transaction begins or ends).

import { type PartitionQueue, TXN_ADDED, TXN_NONE, TXN_PENDING } from './partition-queue.js';
import type { TransactionManager } from './transactions.js';

export class TransactionPartitions {
  /** The AddPartitionsToTxn requests going on, one after another while partitions are pending; never rejects. */
  private adding: Promise<void> | null = null;

  constructor(
    private readonly txn: TransactionManager,
    /** Every partition queue of the producer (the accumulator's, in creation order). */
    private readonly queues: readonly PartitionQueue[],
    /** delivery.timeout.ms: how long one AddPartitionsToTxn may take, retries included. */
    private readonly requestTimeoutMs: number,
    /** Tells the sender that partitions may have become sendable. */
    private readonly wakeSender: () => void,
  ) {}

  /** A partition got a record: one not in the transaction yet joins the next AddPartitionsToTxn request. */
  add(pq: PartitionQueue): void {
    if (pq.inTxn !== TXN_NONE) return;
    pq.inTxn = TXN_PENDING;
    // Kafka's Sender batches the partitions added since its last AddPartitionsToTxn likewise.
    if (this.adding === null) this.adding = this.addPending();
  }

  /** Resolves once no AddPartitionsToTxn is going on (before EndTxn: every partition is in, or the txn failed). */
  async settled(): Promise<void> {
    while (this.adding !== null) await this.adding;
  }

  /** The transaction ended or a new one begins: no partition is in it any more. */
  reset(): void {
    for (const pq of this.queues) pq.inTxn = TXN_NONE;
  }

  private async addPending(): Promise<void> {
    // Let the rest of this turn's records reach their partitions first, so that they share one request.
    await Promise.resolve();
    try {
      for (;;) {
        const pending = this.queues.filter((pq) => pq.inTxn === TXN_PENDING);
        if (pending.length === 0) return;
        if (this.txn.state !== 'IN_TRANSACTION' && this.txn.state !== 'COMMITTING_TRANSACTION') return;
        try {
          await this.txn.addPartitions(
            pending.map((pq) => ({ topic: pq.topic, partition: pq.partition })),
            this.requestTimeoutMs,
          );
        } catch (err) {
          this.txn.fail(err as Error);
          return;
        }
        for (const pq of pending) if (pq.inTxn === TXN_PENDING) pq.inTxn = TXN_ADDED;
        this.wakeSender();
      }
    } finally {
      this.adding = null;
      this.wakeSender();
    }
  }
}
