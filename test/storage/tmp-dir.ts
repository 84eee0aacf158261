// Test helper: a fresh temporary directory per test, removed afterwards even when the test fails.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

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
  t.after(() => {
    try {
      for (const fn of (cleanups.get(t) ?? []).reverse()) fn();
      cleanups.delete(t);
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  });
  return dir;
}
