// Acknowledgements of L_sink_acked and L_replicate_acked: a stream of cumulative byte counts, 8 bytes each (high
// and low 32 bits, big-endian), flowing back against the data. A sink or follower sends how many bytes it has
// appended; a leader sends the producer how many bytes it and every follower have appended. Counts only grow, so a
// reader needs just the latest.
import { assert } from '../../src/common/assert.js';

export const ACK_COUNT_BYTES = 8;
const TWO_TO_32 = 2 ** 32;

export function encodeAckCount(bytes: number): Buffer {
  assert(Number.isSafeInteger(bytes) && bytes >= 0, `ack count ${bytes} is not a byte count`);
  const buf = Buffer.allocUnsafe(ACK_COUNT_BYTES);
  buf.writeUInt32BE(Math.floor(bytes / TWO_TO_32), 0);
  buf.writeUInt32BE(bytes % TWO_TO_32, 4);
  return buf;
}

/** Reads counts out of a byte stream cut anywhere; `latest` is the newest whole count (0 before any). */
export class AckCountReader {
  latest = 0;
  private readonly partial = Buffer.alloc(ACK_COUNT_BYTES);
  private partialBytes = 0;

  /** Takes the next piece of the stream; returns true when it completed at least one count. */
  push(chunk: Buffer): boolean {
    let at = 0;
    let completed = false;
    while (at < chunk.length) {
      const take = Math.min(ACK_COUNT_BYTES - this.partialBytes, chunk.length - at);
      chunk.copy(this.partial, this.partialBytes, at, at + take);
      this.partialBytes += take;
      at += take;
      if (this.partialBytes === ACK_COUNT_BYTES) {
        const count = this.partial.readUInt32BE(0) * TWO_TO_32 + this.partial.readUInt32BE(4);
        assert(count >= this.latest, `ack count went back from ${this.latest} to ${count}`);
        this.latest = count;
        this.partialBytes = 0;
        completed = true;
      }
    }
    return completed;
  }
}
