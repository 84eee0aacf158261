// The payload the limits write: 256 KiB writes, as the protocol fixes, cycled from a small pool of random
// buffers so that a storage layer that compresses or deduplicates blocks cannot flatter the figure.
import { randomBytes } from 'node:crypto';

/** Size of one write in every limit (the benchmark protocol's 256 KiB). */
export const writeBytes = 256 * 1024;

/** Distinct buffers cycled through (4 MiB in all): enough to defeat block dedup, small enough to stay in cache. */
const poolSize = 16;

let pool: Buffer[] | undefined;

/** The buffer for the `index`-th write. */
export function writeBuffer(index: number): Buffer {
  pool ??= Array.from({ length: poolSize }, () => randomBytes(writeBytes));
  return pool[index % poolSize]!;
}
