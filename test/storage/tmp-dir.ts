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

export function tempDir(t: TestContext, prefix = 'brook-storage-'): string {
  const dir = mkdtempSync(join(testRoot(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
