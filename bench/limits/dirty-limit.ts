// The kernel's dirty limit: how many bytes of written-but-not-yet-flushed pages it lets accumulate before it
// makes writers wait for the disk. Writing less than this measures memory, not the disk; L_disk_async writes
// at least twice this so that its figure includes the throttled, disk-bound part.
import { readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';

export interface DirtyLimit {
  bytes: number;
  /** Where `bytes` came from, for the result file. */
  source: 'dirty_bytes' | 'dirty_ratio x MemAvailable' | 'assumed 20 % of free memory';
}

function readNumber(path: string): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** MemAvailable from /proc/meminfo in bytes: the kernel's own estimate of memory usable without swapping. */
function memAvailableBytes(): number | undefined {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * vm.dirty_bytes when set, else vm.dirty_ratio percent of available memory. The kernel applies the ratio to its
 * "dirtyable" memory (free plus reclaimable page cache); MemAvailable is the closest figure it publishes.
 */
export function readDirtyLimit(): DirtyLimit {
  const dirtyBytes = readNumber('/proc/sys/vm/dirty_bytes');
  if (dirtyBytes !== undefined && dirtyBytes > 0) return { bytes: dirtyBytes, source: 'dirty_bytes' };
  const ratio = readNumber('/proc/sys/vm/dirty_ratio');
  const available = memAvailableBytes();
  if (ratio !== undefined && available !== undefined)
    return { bytes: Math.floor((ratio / 100) * available), source: 'dirty_ratio x MemAvailable' };
  return { bytes: Math.floor(0.2 * os.freemem()), source: 'assumed 20 % of free memory' };
}

/** Bytes an unprivileged writer may still use on the filesystem holding `dir`. */
export function freeDiskBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}
