// The per-disk part of `brook rebalance` (Cruise Control's IntraBrokerDiskUsageDistributionGoal), as a pure
// function: within each broker, replicas move from its fullest log directory to its emptiest while that narrows
// the gap, until the bytes of its directories differ by at most a tolerance of their mean. A move copies the
// replica's bytes once (AlterReplicaLogDirs: a future log in the target directory, then a swap), so each counts
// against the same byte limit as the moves between brokers. Greedy and deterministic: the largest replica that
// narrows the gap goes first (ties by topic, then partition); the loop is bounded by the replicas of the broker.

export interface DiskReplica {
  readonly topic: string;
  readonly partition: number;
  readonly sizeBytes: number;
}

export interface DiskModel {
  readonly broker: number;
  readonly logDir: string;
  readonly replicas: readonly DiskReplica[];
}

export interface DiskMove {
  readonly topic: string;
  readonly partition: number;
  readonly broker: number;
  readonly fromDir: string;
  readonly toDir: string;
  readonly bytes: number;
}

export interface DiskPlan {
  readonly moves: DiskMove[];
  readonly movedBytes: number;
  /** Bytes per directory before and after, by broker then directory. */
  readonly before: { broker: number; logDir: string; bytes: number }[];
  readonly after: { broker: number; logDir: string; bytes: number }[];
  /** False when the byte limit stopped the plan before every broker was within the tolerance. */
  readonly complete: boolean;
}

const byName = (a: DiskReplica, b: DiskReplica): number =>
  a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1;

export function planDiskBalance(
  disks: readonly DiskModel[],
  options: { maxMoveBytes: number; tolerance: number; skip?: ReadonlySet<string> },
): DiskPlan {
  const state = disks.map((d) => ({
    broker: d.broker,
    logDir: d.logDir,
    replicas: [...d.replicas],
    bytes: d.replicas.reduce((n, r) => n + r.sizeBytes, 0),
  }));
  const before = state.map((d) => ({ broker: d.broker, logDir: d.logDir, bytes: d.bytes }));
  const moves: DiskMove[] = [];
  let budget = options.maxMoveBytes;
  let complete = true;
  for (const broker of [...new Set(state.map((d) => d.broker))].sort((a, b) => a - b)) {
    const dirs = state.filter((d) => d.broker === broker);
    if (dirs.length < 2) continue;
    const bound = dirs.reduce((n, d) => n + d.replicas.length, 0);
    for (let step = 0; step < bound; step++) {
      const sorted = [...dirs].sort((a, b) => b.bytes - a.bytes || (a.logDir < b.logDir ? -1 : 1));
      const full = sorted[0]!;
      const empty = sorted[sorted.length - 1]!;
      const gap = full.bytes - empty.bytes;
      const mean = dirs.reduce((n, d) => n + d.bytes, 0) / dirs.length;
      if (gap <= options.tolerance * mean) break;
      // A replica of size s narrows the gap when 0 < s < gap; the largest such one narrows it most.
      const candidates = full.replicas
        .filter((r) => r.sizeBytes > 0 && r.sizeBytes < gap)
        .filter((r) => !options.skip?.has(`${r.topic}-${r.partition}`))
        .sort((a, b) => b.sizeBytes - a.sizeBytes || byName(a, b));
      const fitting = candidates.find((r) => r.sizeBytes <= budget);
      if (fitting === undefined) {
        if (candidates.length > 0) complete = false;
        break;
      }
      full.replicas.splice(full.replicas.indexOf(fitting), 1);
      full.bytes -= fitting.sizeBytes;
      empty.replicas.push(fitting);
      empty.bytes += fitting.sizeBytes;
      budget -= fitting.sizeBytes;
      moves.push({
        topic: fitting.topic,
        partition: fitting.partition,
        broker,
        fromDir: full.logDir,
        toDir: empty.logDir,
        bytes: fitting.sizeBytes,
      });
    }
  }
  return {
    moves,
    movedBytes: moves.reduce((n, m) => n + m.bytes, 0),
    before,
    after: state.map((d) => ({ broker: d.broker, logDir: d.logDir, bytes: d.bytes })),
    complete,
  };
}
