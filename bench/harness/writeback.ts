// Waiting for the kernel's writeback to settle. A benchmark that writes gigabytes without fsync leaves dirty
// pages (or pages under writeback) behind; the next repetition would then start with the disk busy and less
// room before the kernel throttles writers. Waiting until little is left makes each repetition start alike.
import { readFileSync } from 'node:fs';

/** Dirty plus under-writeback bytes from /proc/meminfo; undefined where it cannot be read. */
export function pendingWritebackBytes(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : 0;
  };
  return field('Dirty') + field('Writeback');
}

/**
 * Resolves once dirty plus writeback bytes are at most `thresholdBytes`, or after `timeoutMs` (the machine is
 * shared: others may keep some dirty all the time). Returns what was left and how long it waited.
 */
export async function waitForWriteback(
  thresholdBytes = 128 * 1024 * 1024,
  timeoutMs = 20_000,
): Promise<{ pendingBytes: number; waitedMs: number }> {
  const start = performance.now();
  for (;;) {
    const pending = pendingWritebackBytes() ?? 0;
    const waitedMs = performance.now() - start;
    if (pending <= thresholdBytes || waitedMs >= timeoutMs) return { pendingBytes: pending, waitedMs };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
