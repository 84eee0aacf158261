// L_disk_async: how fast Node can append into the page cache when the kernel, not the writer, decides when to
// flush (durability D0). The same 256 KiB append loop as L_disk_sync without fdatasync, aiming at twice the
// kernel's dirty limit so that the throttled, disk-bound phase weighs in. The total is capped by half the free
// disk space (the disk is shared), by the repetition's time bound and by an optional byte cap; the result
// records the target, what was written and which bound stopped it. MB/s are decimal.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import { freeDiskBytes, readDirtyLimit } from './dirty-limit.js';
import { mountOf } from './mount-info.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

export type AsyncStop = 'target' | 'time' | 'disk-space' | 'bytes-max';

/** The byte budget of one repetition and the bound that sets it. */
export function planAsyncBytes(
  targetBytes: number,
  freeBytes: number,
  bytesMax: number | undefined,
): { bytes: number; bound: Exclude<AsyncStop, 'time'> } {
  // Half the free space: other engineers and the broker under test share this disk.
  const diskCap = Math.floor(freeBytes / 2);
  let plan: { bytes: number; bound: Exclude<AsyncStop, 'time'> } = { bytes: targetBytes, bound: 'target' };
  if (diskCap < plan.bytes) plan = { bytes: diskCap, bound: 'disk-space' };
  if (bytesMax !== undefined && bytesMax < plan.bytes) plan = { bytes: bytesMax, bound: 'bytes-max' };
  return plan;
}

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const dirty = readDirtyLimit();
  const targetBytes = 2 * dirty.bytes;
  const plan = planAsyncBytes(targetBytes, freeDiskBytes(context.workDir), context.diskBytesMax);
  const handle = await open(join(context.workDir, 'disk-async.bin'), 'a');
  let bytes = 0;
  let writes = 0;
  try {
    const start = performance.now();
    const deadline = start + context.durationMs;
    let stoppedBy: AsyncStop = plan.bound;
    // MB written in each whole second, to show where the kernel starts throttling the writer.
    const megabytesBySecond: number[] = [];
    let secondEnd = start + 1000;
    let bytesAtSecondStart = 0;
    while (bytes < plan.bytes) {
      const now = performance.now();
      if (now >= secondEnd) {
        megabytesBySecond.push((bytes - bytesAtSecondStart) / 1e6);
        bytesAtSecondStart = bytes;
        secondEnd += 1000;
      }
      if (now >= deadline) {
        stoppedBy = 'time';
        break;
      }
      await handle.write(writeBuffer(writes), 0, writeBytes);
      writes++;
      bytes += writeBytes;
    }
    const seconds = (performance.now() - start) / 1000;
    return {
      value: megabytesPerSecond(bytes, seconds),
      details: {
        bytes,
        seconds,
        writeBytes,
        stoppedBy,
        megabytesBySecond,
        targetBytes,
        plannedBytes: plan.bytes,
        dirtyLimitBytes: dirty.bytes,
        dirtyLimitSource: dirty.source,
        mount: mountOf(context.workDir),
      },
    };
  } finally {
    // Closing without fsync is the point; unlinking the file (the runner removes the directory) drops its
    // remaining dirty pages instead of flushing them.
    await handle.close();
  }
}

export const diskAsyncLimit: LimitDefinition = {
  name: 'L_disk_async',
  unit: 'MB/s',
  description: '256 KiB appends, no fsync, aiming at 2x the dirty limit',
  measureOnce,
  note(details) {
    const gb = (n: number): string => formatFigure(n / 1e9);
    const written = details.map((d) => d.bytes as number);
    const stops = [...new Set(details.map((d) => d.stoppedBy as string))].join('/');
    const target = details[0]?.targetBytes as number;
    return `wrote ${gb(Math.min(...written))}-${gb(Math.max(...written))} of ${gb(target)} GB, stopped by ${stops}`;
  },
};
