// The processes a cluster benchmark starts (ZooKeeper, detached in its own session, and the brokers) are
// killed by their PIDs whatever ends the benchmark: a normal return (the cluster stops them itself), a throw
// (the `finally` of the caller), Ctrl-C or SIGTERM (Node would otherwise die without running any `finally`),
// or an exit with processes still registered. Only PIDs registered here are ever signalled.
//
// Install the guard (withProcessGuard) before any withTempDir of the same run: signal listeners run in the
// order they were added, so the processes die before their directories are removed.

const guarded = new Set<number>();
let depth = 0;

/** Registers a PID this benchmark started, to be killed if the benchmark ends abnormally. */
export function guardProcess(pid: number): void {
  guarded.add(pid);
}

/** Forgets a PID once its process has been stopped (so a reused PID is never signalled). */
export function releaseProcess(pid: number): void {
  guarded.delete(pid);
}

function killAll(): void {
  for (const pid of guarded) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  guarded.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  uninstall();
  // Let the signal do what it would have done, unless another listener (withTempDir's) will re-raise it.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function install(): void {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAll);
}

function uninstall(): void {
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.off('exit', killAll);
}

/** Runs `use` with the guard installed; processes still registered when it ends are killed. */
export async function withProcessGuard<T>(use: () => Promise<T>): Promise<T> {
  if (depth++ === 0) install();
  try {
    return await use();
  } finally {
    if (--depth === 0) {
      killAll();
      uninstall();
    }
  }
}
