// The files of a cleaned segment on their way into the log, and what loading does with them after a crash.
//
// A cleaning writes `<base>.log.cleaned` with its `.index.cleaned`, `.timeindex.cleaned` and (when it holds
// aborted transactions) `.txnindex.cleaned`, fsyncs them, then swaps them in, as Kafka's replaceSegments does:
//   1. rename every `.cleaned` to `.swap`, the .log last: a `.log.swap` means the whole set is complete;
//   2. rename the replaced segments' files to `.deleted` (readers keep their descriptors);
//   3. rename every `.swap` to its final name, the .log last, and open the segment.
// A crash before 1 ends leaves `.cleaned` files (or index `.swap` files without a `.log.swap`): loading deletes
// them and the old segments are intact. A crash after leaves a `.log.swap`: loading completes the swap, deleting
// every segment whose base offset lies in the range the swap file covers and renaming the swap files into place
// (`completeSwaps`), as Kafka's LogLoader does; old segments already renamed `.deleted` are removed anyway. An
// encrypted swap's `.enc` may already have its final name (step 3 renames it first): it is kept and reads the
// `.log.swap`.

import { closeSync, existsSync, fstatSync, openSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type HeaderSource, scanHeaders } from '../batch-scan.js';
import { SegmentCipher, type SegmentKeys } from '../encryption/segment-cipher.js';
import {
  CLEANED_SUFFIX,
  ENC_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  offsetFileStem,
  parseOffsetFileName,
  SWAP_SUFFIX,
  TIME_INDEX_SUFFIX,
  TXN_INDEX_SUFFIX,
} from '../file-names.js';

/** The files of a segment, the .log last (the order of every rename). */
export const SEGMENT_SUFFIXES = [
  ENC_SUFFIX,
  INDEX_SUFFIX,
  TIME_INDEX_SUFFIX,
  TXN_INDEX_SUFFIX,
  LOG_SUFFIX,
] as const;

export function cleanedPath(dir: string, baseOffset: number, suffix: string): string {
  return join(dir, offsetFileStem(baseOffset) + suffix + CLEANED_SUFFIX);
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

export function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Step 1: `.cleaned` to `.swap`, the .log last. */
export function cleanedToSwap(dir: string, baseOffset: number): void {
  for (const suffix of SEGMENT_SUFFIXES) {
    const stem = join(dir, offsetFileStem(baseOffset) + suffix);
    renameIfPresent(stem + CLEANED_SUFFIX, stem + SWAP_SUFFIX);
  }
}

/** Step 3: `.swap` to the final names, the .log last. */
export function swapToFinal(dir: string, baseOffset: number): void {
  for (const suffix of SEGMENT_SUFFIXES) {
    const stem = join(dir, offsetFileStem(baseOffset) + suffix);
    renameIfPresent(stem + SWAP_SUFFIX, stem);
  }
}

/** Removes a cleaning's output that will not be swapped in. */
export function deleteCleaned(dir: string, baseOffset: number): void {
  for (const suffix of SEGMENT_SUFFIXES) unlinkIfPresent(cleanedPath(dir, baseOffset, suffix));
}

/** The last offset in a segment file (base offset when it holds no batch), by its batch headers. */
function lastOffsetOfFile(
  path: string,
  encPath: string,
  baseOffset: number,
  keys: SegmentKeys | null,
): number {
  const fd = openSync(path, 'r');
  // An encrypted swap file is read through its own cipher (the `.enc.swap` renamed with it).
  const cipher = keys !== null && existsSync(encPath) ? SegmentCipher.open(encPath, baseOffset, keys) : null;
  try {
    let last = baseOffset;
    const source: HeaderSource =
      cipher === null ? fd : (buf, length, position) => cipher.readSync(fd, position, length).copy(buf, 0);
    const size =
      cipher === null ? fstatSync(fd).size : Math.min(fstatSync(fd).size, cipher.authenticatedLength());
    scanHeaders(source, 0, size, (info) => {
      last = Math.max(last, info.lastOffset);
      return true;
    });
    return last;
  } finally {
    closeSync(fd);
    cipher?.close();
  }
}

/**
 * Completes the swaps a crash interrupted (see the file header): for each `.log.swap`, the segments it replaces
 * go and its files take their final names. Returns the base offsets of the completed swaps. Leftover `.cleaned`
 * files and index `.swap` files without a `.log.swap` are left for the caller, which deletes them.
 */
export function completeSwaps(dir: string, keys: SegmentKeys | null = null): number[] {
  const names = readdirSync(dir);
  const swaps: number[] = [];
  for (const name of names) {
    if (!name.endsWith(LOG_SUFFIX + SWAP_SUFFIX)) continue;
    const parsed = parseOffsetFileName(name.slice(0, -SWAP_SUFFIX.length));
    if (parsed !== null && parsed.suffix === LOG_SUFFIX) swaps.push(parsed.offset);
  }
  swaps.sort((a, b) => a - b);
  for (const base of swaps) {
    const stem = join(dir, offsetFileStem(base));
    // Step 3 renames the `.enc` before the .log: a crash between leaves the swap's `.enc` at its final name. Step 2
    // had renamed the replaced segments' files `.deleted` by then, so a final `.enc` with no `.enc.swap` beside
    // the `.log.swap` is the swap's own: it reads the `.log.swap` and stays.
    const encSwapped = !existsSync(stem + ENC_SUFFIX + SWAP_SUFFIX) && existsSync(stem + ENC_SUFFIX);
    const last = lastOffsetOfFile(
      stem + LOG_SUFFIX + SWAP_SUFFIX,
      stem + ENC_SUFFIX + (encSwapped ? '' : SWAP_SUFFIX),
      base,
      keys,
    );
    for (const name of readdirSync(dir)) {
      const parsed = parseOffsetFileName(name);
      if (parsed === null || !(SEGMENT_SUFFIXES as readonly string[]).includes(parsed.suffix)) continue;
      if (encSwapped && parsed.offset === base && parsed.suffix === ENC_SUFFIX) continue;
      if (parsed.offset >= base && parsed.offset <= last) unlinkSync(join(dir, name));
    }
    swapToFinal(dir, base);
  }
  return swaps;
}
