// L_read: how fast one Node process reads files that are already in the page cache, front to back, in the size a
// consumer fetches from one partition (1 MiB reads into one reused buffer, async as the broker reads, no protocol,
// no socket). A consumer catching up a stored backlog cannot beat it on this machine: the broker reads the same
// bytes from the same cache and must then also send them.
//
// The registry's repetition writes a file of its own (256 MiB, or less under --disk-bytes-max), reads it once so
// that every page is cached, then reads it again pass after pass within the time bound. The backlog benchmark
// calls readFilesOnce on the broker's own segment files instead, so that its limit reads exactly the bytes its
// consumer reads.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { assert } from '../../src/common/assert.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

/** max.partition.fetch.bytes's default: what one partition gives one fetch. */
export const readChunkBytes = 1024 * 1024;
const fileBytesDefault = 256 * 1024 * 1024;

/** Reads each file to its end, in order, with one reused buffer; answers the bytes read and the time taken. */
export async function readFilesOnce(
  paths: readonly string[],
  chunkBytes = readChunkBytes,
): Promise<{ bytes: number; seconds: number }> {
  const buffer = Buffer.allocUnsafe(chunkBytes);
  let bytes = 0;
  const start = performance.now();
  for (const path of paths) {
    const handle = await open(path, 'r');
    try {
      let position = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
        if (bytesRead === 0) break;
        position += bytesRead;
      }
      bytes += position;
    } finally {
      await handle.close();
    }
  }
  return { bytes, seconds: (performance.now() - start) / 1000 };
}

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const fileBytes = Math.min(fileBytesDefault, context.diskBytesMax ?? fileBytesDefault);
  assert(fileBytes >= writeBytes, `L_read needs at least ${writeBytes} bytes of file`);
  const path = join(context.workDir, 'read.bin');
  const handle = await open(path, 'w');
  try {
    for (let written = 0, i = 0; written + writeBytes <= fileBytes; written += writeBytes, i++)
      await handle.write(writeBuffer(i), 0, writeBytes);
  } finally {
    await handle.close();
  }
  // The first pass brings in whatever the writer's pages lost to memory pressure; it is not counted.
  await readFilesOnce([path]);
  const deadline = performance.now() + context.durationMs;
  let bytes = 0;
  let seconds = 0;
  let passes = 0;
  do {
    const pass = await readFilesOnce([path]);
    bytes += pass.bytes;
    seconds += pass.seconds;
    passes++;
  } while (performance.now() < deadline);
  return { value: megabytesPerSecond(bytes, seconds), details: { fileBytes, passes, bytes, seconds } };
}

export const readLimit: LimitDefinition = {
  name: 'L_read',
  unit: 'MB/s',
  description: 'sequential 1 MiB async reads of a page-cached file into one buffer',
  measureOnce,
  note(details) {
    const passes = details.map((d) => Number(d.passes));
    const fileMiB = Number(details[0]?.fileBytes ?? 0) / (1024 * 1024);
    return `${formatFigure(fileMiB)} MiB file, ${Math.min(...passes)}-${Math.max(...passes)} passes`;
  },
};
