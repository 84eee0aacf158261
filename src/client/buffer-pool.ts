// Spare record-batch buffers of one producer. A batch that grew while its partition waited for an in-flight slot
// holds a buffer of up to max.request.size; allocating a fresh one for every such batch made each a new external
// allocation (V8 counts them towards starting a full garbage collection, and a full collection stops the
// producer's event loop for tens of milliseconds on a busy machine) and a first touch of fresh pages. Buffers
// come back here once their batch has its outcome, and the next batch takes one, as Kafka's Java producer pools
// batch.size buffers.
//
// A buffer may be given back only when nothing can still read it: after the broker answered the request that
// carried it (it was then fully written to the socket), after that request failed (a Connection rejects a request
// only once its socket is destroyed, so bytes still queued there, behind a stalled peer after a request timeout
// say, are dropped and never sent), or when it was never sent. The producer gives a batch's buffer back when the
// batch has its outcome, and a batch is in at most one request at a time, so no request holds a buffer in the
// pool. With acks=0 a request is done when it is queued for the socket, which may still hold the buffer, so that
// producer does not give back.

export class BufferPool {
  private readonly spare: Buffer[] = [];
  private spareBytes = 0;

  /** Keeps spare buffers up to `bytesMax` bytes in all; any more are left to the garbage collector. */
  constructor(private readonly bytesMax: number) {}

  /** A buffer of at least `bytes` bytes, not zeroed: a spare one that fits, else a new one. */
  take(bytes: number): Buffer {
    const spare = this.spare;
    for (let i = spare.length - 1; i >= 0; i--) {
      const b = spare[i]!;
      if (b.length >= bytes) {
        spare[i] = spare[spare.length - 1]!;
        spare.pop();
        this.spareBytes -= b.length;
        return b;
      }
    }
    return Buffer.allocUnsafe(bytes);
  }

  /** Takes back a buffer nothing reads any more. */
  give(buf: Buffer): void {
    if (this.spareBytes + buf.length > this.bytesMax) return;
    this.spare.push(buf);
    this.spareBytes += buf.length;
  }

  /** Bytes held as spares. */
  get bytes(): number {
    return this.spareBytes;
  }
}
