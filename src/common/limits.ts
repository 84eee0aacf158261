// Bounds that are not broker configuration but protect decoders and buffers from hostile input.
// Configurable bounds (socket.request.max.bytes, queued.max.requests, ...) live in the broker config.

export const limits = {
  /** Largest frame any decoder accepts, whatever the configuration says (Kafka's default request max is 100 MiB). */
  frameBytesMax: 100 * 1024 * 1024,
  /** Record batches are decompressed into at most this many bytes, so a zip bomb cannot exhaust memory. */
  decompressedBatchBytesMax: 256 * 1024 * 1024,
  /** Largest number of records one batch may claim. */
  recordsPerBatchMax: 1_000_000,
} as const;
