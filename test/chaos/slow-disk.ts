// The slow-disk fault's helper (slow-fsync.c): built with gcc into a shared library that brokers preload, and the
// file through which the harness sets one broker's fsync delay (written: slow; removed: healed).

import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { run } from './shell.js';

const SOURCE = resolve(import.meta.dirname, '../../../test/chaos/slow-fsync.c');

/** The environment variable the helper reads the delay file's path from. */
export const SLOW_FSYNC_FILE_ENV = 'BROOK_SLOW_FSYNC_FILE';

/** Compiles the helper into `dir`; answers the library's path. Throws when gcc is missing or fails. */
export async function buildSlowFsync(dir: string): Promise<string> {
  if (!existsSync(SOURCE)) throw new Error(`no ${SOURCE}`);
  const library = join(dir, 'slow-fsync.so');
  await run('gcc', ['-shared', '-fPIC', '-O2', '-Wall', '-Werror', '-o', library, SOURCE, '-ldl']);
  return library;
}

/** Makes every fsync and fdatasync of the processes reading `file` sleep `delayMs` first; 0 heals. */
export function setFsyncDelay(file: string, delayMs: number): void {
  if (delayMs > 0) writeFileSync(file, `${Math.round(delayMs)}\n`);
  else rmSync(file, { force: true });
}
