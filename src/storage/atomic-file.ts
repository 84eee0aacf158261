// Crash-safe replacement of small files (checkpoints, partition.metadata, meta.properties).
//
// The content goes to `<name>.tmp`, is fsync'ed, renamed over the target, and the directory is fsync'ed so the
// rename itself survives a power cut. A reader therefore sees the old file or the new one, never a torn one.
// These writes are synchronous: they are small and rare, and a state change must not await half-way.

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { TMP_SUFFIX } from './file-names.js';

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeFileAtomic(path: string, content: string | Buffer): void {
  const tmp = path + TMP_SUFFIX;
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const fd = openSync(tmp, 'w');
  try {
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}

/** Reads a whole small file, or null if it does not exist; refuses files larger than `bytesMax`. */
export function readSmallFile(path: string, bytesMax: number): Buffer | null {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (size > bytesMax)
    throw new StorageFormatError(path, `${size} bytes is more than the ${bytesMax} allowed`);
  return readFileSync(path);
}

/** A storage file whose content does not follow its format. Callers decide whether to rebuild or fail. */
export class StorageFormatError extends Error {
  override name = 'StorageFormatError';
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}
