// Temporary directories for benchmark files that are removed whatever happens: on return, on a throw, and on
// Ctrl-C or SIGTERM (which otherwise end Node without running finally blocks), so a benchmark interrupted while
// writing gigabytes does not leave them on a shared disk.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const live = new Set<string>();

function removeAll(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  removeAll();
  // Let the signal do what it would have done without us.
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.kill(process.pid, signal);
}

/** Runs `use` with a fresh directory under `parent` (named `prefix` plus random characters), then removes it. */
export async function withTempDir<T>(
  parent: string,
  prefix: string,
  use: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(parent, prefix));
  if (live.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  live.add(dir);
  try {
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    live.delete(dir);
    if (live.size === 0) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
