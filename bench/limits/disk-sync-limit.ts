// L_disk_sync: how fast Node can append durably. A loop appends 256 KiB writes to one file and calls fdatasync
// whenever 2 ms have passed since the previous fdatasync started, like a broker that group-commits every 2 ms
// (durability D1). Writes and fdatasync are issued one after the other, never overlapping, and a last
// fdatasync ends the repetition, so every byte counted is on disk. MB/s are decimal.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Histogram } from '../harness/histogram.js';
import { megabytesPerSecond } from '../harness/ratio.js';
import { formatFigure } from '../harness/table.js';
import { mountOf } from './mount-info.js';
import type { LimitContext, LimitDefinition, LimitSample } from './registry.js';
import { writeBuffer, writeBytes } from './write-buffers.js';

/** The protocol's group-commit cadence. */
const syncIntervalMs = 2;

async function measureOnce(context: LimitContext): Promise<LimitSample> {
  const handle = await open(join(context.workDir, 'disk-sync.bin'), 'a');
  const syncLatency = new Histogram('us');
  let bytes = 0;
  let writes = 0;
  try {
    const start = performance.now();
    const deadline = start + context.durationMs;
    let lastSyncStart = start;
    const sync = async (): Promise<void> => {
      lastSyncStart = performance.now();
      await handle.datasync();
      syncLatency.record((performance.now() - lastSyncStart) * 1000);
    };
    while (
      performance.now() < deadline &&
      (context.diskBytesMax === undefined || bytes < context.diskBytesMax)
    ) {
      await handle.write(writeBuffer(writes), 0, writeBytes);
      writes++;
      bytes += writeBytes;
      if (performance.now() - lastSyncStart >= syncIntervalMs) await sync();
    }
    await sync();
    const seconds = (performance.now() - start) / 1000;
    return {
      value: megabytesPerSecond(bytes, seconds),
      details: {
        bytes,
        seconds,
        writeBytes,
        syncs: syncLatency.count,
        bytesPerSync: bytes / syncLatency.count,
        fdatasyncLatency: syncLatency.summary(),
        mount: mountOf(context.workDir),
      },
    };
  } finally {
    await handle.close();
  }
}

export const diskSyncLimit: LimitDefinition = {
  name: 'L_disk_sync',
  unit: 'MB/s',
  description: '256 KiB appends with fdatasync every 2 ms',
  measureOnce,
  note(details) {
    const p99 = details.map((d) => (d.fdatasyncLatency as { p99: number }).p99 / 1000);
    const fs = (details[0]?.mount as { fsType?: string } | undefined)?.fsType ?? '?';
    return `fdatasync p99 ${formatFigure(Math.min(...p99))}-${formatFigure(Math.max(...p99))} ms on ${fs}`;
  },
};
