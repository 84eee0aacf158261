// Test helper: a fresh temporary directory per test, removed afterwards even when the test fails.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { backgroundWriteSlots } from '../../src/storage/atomic-file.js';

/**
 * Where test directories go: a tmpfs when there is one, because these tests fsync a lot and what they check is
 * the bytes, not the disk.
 */
export function testRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

const cleanups = new WeakMap<TestContext, (() => void)[]>();

/** Runs `fn` when the test ends, before its temporary directories are removed (newest first). */
export function deferCleanup(t: TestContext, fn: () => void): void {
  let list = cleanups.get(t);
  if (list === undefined) {
    list = [];
    cleanups.set(t, list);
  }
  list.push(fn);
}

export function tempDir(t: TestContext, prefix = 'brook-storage-'): string {
  const dir = mkdtempSync(join(testRoot(), prefix));
  t.after(async () => {
    try {
      for (const fn of (cleanups.get(t) ?? []).reverse()) fn();
      cleanups.delete(t);
    } finally {
      // A checkpoint's background write still running when its log closed is dropped, but its tmp file may
      // still appear in the directory while it is being removed (seen once under load: rmdir ENOTEMPTY).
      await backgroundWritesDone();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
  return dir;
}

/** Waits until no background file write runs or waits (at most 5 s: a stuck write must not hang the tests). */
async function backgroundWritesDone(): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    await new Promise((r) => setImmediate(r));
    const slots = backgroundWriteSlots();
    if ((slots.running === 0 && slots.waiting === 0) || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}
