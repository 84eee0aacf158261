// The output buffer a codec keeps for transient decompression (DecompressOptions.transient in codecs.ts): a caller
// that is done with the bytes before its next transient call gets a view of one buffer per codec, grown to a power
// of two, instead of a fresh buffer per batch. On these virtual machines a fresh buffer of a batch's size is mapped
// and faulted in page by page, which cost as much as decoding into it (bench/README.md, "Produce: zstd batches
// decompressed into a reused buffer" and the lz4 sections after it).

/** The largest output kept: bigger batches are rare and get a buffer of their own. */
export const TRANSIENT_OUTPUT_BYTES_MAX = 4 * 1024 * 1024;
const TRANSIENT_OUTPUT_BYTES_MIN = 64 * 1024;

export class TransientOutput {
  private kept = Buffer.allocUnsafeSlow(0);

  /**
   * `bytes` of output: a view of the kept buffer (overwritten by the next call) when `transient` and within
   * TRANSIENT_OUTPUT_BYTES_MAX, else a buffer of its own.
   */
  take(bytes: number, transient: boolean): Buffer {
    if (!transient || bytes > TRANSIENT_OUTPUT_BYTES_MAX) return Buffer.allocUnsafe(bytes);
    if (this.kept.length < bytes) {
      this.kept = Buffer.allocUnsafeSlow(
        Math.max(TRANSIENT_OUTPUT_BYTES_MIN, 2 ** Math.ceil(Math.log2(bytes))),
      );
    }
    return this.kept.subarray(0, bytes);
  }
}
