// What the cleaner knows about transactions while it walks a range of the log in offset order: Kafka's
// CleanedTransactionMetadata.
//
// Fed with the aborted transactions of the range (from the .txnindex files), it tells for each data batch
// whether it belongs to an aborted transaction (then it is removed, and left out of the offset map), and for
// each transaction marker whether it may go: a COMMIT marker once no batch of its transaction was seen in this
// pass, an ABORT marker once no batch of its transaction is left (the data of an aborted transaction is
// removed by the pass that sees it, so its marker is kept one pass longer, and its .txnindex entry with it).
// Either way a marker is only removed after its batch's delete horizon (delete.retention.ms), so that a
// consumer that read the transaction's data also gets to read the marker.

import { batchHeader } from '../../protocol/records/batch-header.js';
import { ControlType, readEndTxnMarker } from '../control-marker.js';
import type { AbortedTxn } from '../txn-index.js';

interface OngoingAbort {
  readonly txn: AbortedTxn;
  /** Set when a batch of the transaction was seen in this pass. */
  sawBatch: boolean;
}

export class CleanedTransactions {
  private readonly aborted: AbortedTxn[];
  private next = 0;
  private readonly ongoingAborted = new Map<number, OngoingAbort>();
  private readonly ongoingCommitted = new Set<number>();

  /**
   * `onKeptAbortMarker` receives the aborted transaction whose marker stays because its data was seen: the
   * cleaned segment's .txnindex needs it again.
   */
  constructor(
    aborted: readonly AbortedTxn[],
    private readonly onKeptAbortMarker: (txn: AbortedTxn) => void = () => {},
  ) {
    this.aborted = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  private startAbortedUpTo(offset: number): void {
    while (this.next < this.aborted.length && this.aborted[this.next]!.firstOffset <= offset) {
      const txn = this.aborted[this.next++]!;
      if (!this.ongoingAborted.has(txn.producerId))
        this.ongoingAborted.set(txn.producerId, { txn, sawBatch: false });
    }
  }

  /** A data batch: true when it belongs to an aborted transaction (discard it). */
  onDataBatch(buf: Buffer, pos: number): boolean {
    this.startAbortedUpTo(batchHeader.lastOffset(buf, pos));
    if (!batchHeader.isTransactional(buf, pos)) return false;
    const producerId = batchHeader.producerId(buf, pos);
    const abort = this.ongoingAborted.get(producerId);
    if (abort !== undefined) {
      abort.sawBatch = true;
      return true;
    }
    this.ongoingCommitted.add(producerId);
    return false;
  }

  /** A control batch (whole in buf): true when it may be discarded once its delete horizon has passed. */
  onControlBatch(buf: Buffer, pos: number): boolean {
    this.startAbortedUpTo(batchHeader.lastOffset(buf, pos));
    // A control batch emptied by an earlier pass has nothing left to say.
    if (batchHeader.recordsCount(buf, pos) === 0) return true;
    const marker = readEndTxnMarker(buf, pos);
    if (marker === null) return false;
    const producerId = batchHeader.producerId(buf, pos);
    if (marker.type === ControlType.Abort) {
      const abort = this.ongoingAborted.get(producerId);
      this.ongoingAborted.delete(producerId);
      if (abort?.sawBatch === true) {
        this.onKeptAbortMarker(abort.txn);
        return false;
      }
      return true;
    }
    return !this.ongoingCommitted.delete(producerId);
  }
}
