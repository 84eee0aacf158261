// The planner of `brook rebalance`, a small Cruise-Control-like goal optimizer, as a pure function: given the
// brokers (with racks) and each partition's replicas and size, it proposes new replica lists that
//   1. drain the brokers being removed (every replica on them moves; a hard goal),
//   2. even out the replica count per broker (max - min <= 1 where the placement rules allow it),
//   3. even out the bytes per broker (max - min within a tolerance of the mean), by moves and by swaps that leave
//      the counts as they are,
//   4. even out preferred leaders per broker (the first replica; leadership follows after a preferred election)
//      by reordering replica lists, which moves no data,
// while never lowering the number of racks a partition spans, and never copying more than `maxMoveBytes` (the
// bytes of every replica placed on a broker that did not hold it before). A plan cut short by that limit says so;
// running the tool again takes the next step.
//
// Greedy and deterministic: the same input gives the same plan (ties go to the lower broker id and the first
// partition in topic, partition order). Every loop is bounded.

export interface BrokerModel {
  readonly id: number;
  readonly rack: string | null;
}

export interface PartitionModel {
  readonly topic: string;
  readonly partition: number;
  /** In preference order: the first is the preferred leader. */
  readonly replicas: readonly number[];
  /** Size of the partition's log (the leader's), what a new replica has to copy. */
  readonly sizeBytes: number;
}

export interface PlanOptions {
  /** Bytes the plan may copy at most (replicas placed on brokers that did not hold them); Infinity: no limit. */
  readonly maxMoveBytes: number;
  /** Brokers to empty (`--remove-broker`); they get nothing new. */
  readonly removeBrokers?: readonly number[];
  /** Bytes per broker may differ by this share of the mean; default 0.1. */
  readonly bytesTolerance?: number;
}

export interface PartitionMove {
  readonly topic: string;
  readonly partition: number;
  readonly from: readonly number[];
  readonly to: readonly number[];
  /** Bytes copied: the size once for each broker in `to` that is not in `from`. */
  readonly movedBytes: number;
}

export interface BrokerLoad {
  readonly id: number;
  readonly replicas: number;
  readonly leaders: number;
  readonly bytes: number;
}

export interface RebalancePlan {
  readonly moves: readonly PartitionMove[];
  readonly movedBytes: number;
  readonly before: readonly BrokerLoad[];
  readonly after: readonly BrokerLoad[];
  /** False when the byte limit stopped moves that would have improved the balance. */
  readonly complete: boolean;
}

interface Working {
  readonly model: PartitionModel;
  replicas: number[];
}

const DEFAULT_BYTES_TOLERANCE = 0.1;

export function planRebalance(
  brokers: readonly BrokerModel[],
  partitions: readonly PartitionModel[],
  options: PlanOptions,
): RebalancePlan {
  const removed = new Set(options.removeBrokers ?? []);
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack]));
  const targets = brokers
    .map((b) => b.id)
    .filter((id) => !removed.has(id))
    .sort((a, b) => a - b);
  if (targets.length === 0) throw new Error('no broker left to hold the replicas');
  const work: Working[] = [...partitions]
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
    .map((model) => ({ model, replicas: [...model.replicas] }));
  const before = loads(brokers, work);
  let movedBytes = 0;
  let limited = false;

  const costOf = (w: Working, replicas: readonly number[]): number =>
    replicas.filter((r) => !w.model.replicas.includes(r)).length * w.model.sizeBytes;
  /** Applies a new replica list if the byte budget allows; answers whether it did. */
  const apply = (w: Working, replicas: number[]): boolean => {
    const extra = costOf(w, replicas) - costOf(w, w.replicas);
    if (movedBytes + extra > options.maxMoveBytes) {
      limited = true;
      return false;
    }
    movedBytes += extra;
    w.replicas = replicas;
    return true;
  };
  const racks = (replicas: readonly number[]): number =>
    new Set(replicas.map((r) => rackOf.get(r) ?? `no-rack-${r}`)).size;
  /** `out` replaced by `into` in the list, if `into` may hold it: not there yet, not removed, no rack lost. */
  const replaced = (w: Working, out: number, into: number, rackStrict = true): number[] | null => {
    if (w.replicas.includes(into) || removed.has(into)) return null;
    const next = w.replicas.map((r) => (r === out ? into : r));
    if (rackStrict && racks(next) < racks(w.replicas)) return null;
    return next;
  };
  const count = () => {
    const replicas = new Map(targets.map((id) => [id, 0]));
    const bytes = new Map(targets.map((id) => [id, 0]));
    const leaders = new Map(targets.map((id) => [id, 0]));
    for (const w of work) {
      for (const r of w.replicas) {
        if (!replicas.has(r)) continue;
        replicas.set(r, replicas.get(r)! + 1);
        bytes.set(r, bytes.get(r)! + w.model.sizeBytes);
      }
      const first = w.replicas[0];
      if (first !== undefined && leaders.has(first)) leaders.set(first, leaders.get(first)! + 1);
    }
    return { replicas, bytes, leaders };
  };
  const rounds = 4 * work.length * Math.max(1, work[0]?.replicas.length ?? 1) + targets.length;

  // 1. Drain: every replica on a removed broker goes to the least loaded broker that may hold it.
  for (const w of work) {
    for (const out of w.replicas.filter((r) => removed.has(r))) {
      const c = count();
      const order = [...targets].sort(
        (a, b) => c.replicas.get(a)! - c.replicas.get(b)! || c.bytes.get(a)! - c.bytes.get(b)! || a - b,
      );
      // Racks kept where possible; a drain must happen even on a cluster without a rack to spare.
      const next =
        order.map((into) => replaced(w, out, into)).find((r) => r !== null) ??
        order.map((into) => replaced(w, out, into, false)).find((r) => r !== null);
      if (next !== undefined && next !== null) apply(w, next);
    }
  }

  // 2. Replica counts: from the broker with the most to the one with the fewest, smallest partitions first
  // unless a bigger one also narrows the bytes gap.
  for (let round = 0; round < rounds; round++) {
    const c = count();
    const byCount = [...targets].sort(
      (a, b) => c.replicas.get(a)! - c.replicas.get(b)! || c.bytes.get(a)! - c.bytes.get(b)! || a - b,
    );
    let moved = false;
    for (const hi of [...byCount].reverse()) {
      for (const lo of byCount) {
        if (c.replicas.get(hi)! - c.replicas.get(lo)! < 2) break;
        const gap = c.bytes.get(hi)! - c.bytes.get(lo)!;
        const choices = work
          .filter((w) => w.replicas.includes(hi))
          .map((w) => ({ w, next: replaced(w, hi, lo) }))
          .filter((o): o is { w: Working; next: number[] } => o.next !== null)
          .sort((x, y) => {
            const fx = x.w.model.sizeBytes * 2 <= gap ? 0 : 1;
            const fy = y.w.model.sizeBytes * 2 <= gap ? 0 : 1;
            if (fx !== fy) return fx - fy;
            // Among those that narrow the gap, the biggest; else the smallest.
            return fx === 0
              ? y.w.model.sizeBytes - x.w.model.sizeBytes
              : x.w.model.sizeBytes - y.w.model.sizeBytes;
          });
        moved = choices.some((o) => apply(o.w, o.next));
        if (moved) break;
      }
      if (moved) break;
    }
    if (!moved) break;
  }

  // 3. Bytes: a move where the counts allow it, else a swap of a bigger replica on the heaviest broker with a
  // smaller one on the lightest; the one that brings the two closest.
  const tolerance = options.bytesTolerance ?? DEFAULT_BYTES_TOLERANCE;
  /** One move (when `mayMove`: the counts allow it) or swap between `hi` and `lo` that narrows their gap most. */
  const narrowBytes = (hi: number, lo: number, gap: number, mayMove: boolean): boolean => {
    type Option = { changes: { w: Working; next: number[] }[]; delta: number; cost: number };
    const candidates: Option[] = [];
    const onHi = work.filter((w) => w.replicas.includes(hi) && !w.replicas.includes(lo));
    const onLo = work.filter((w) => w.replicas.includes(lo) && !w.replicas.includes(hi));
    if (mayMove) {
      for (const w of onHi) {
        const next = replaced(w, hi, lo);
        if (next !== null)
          candidates.push({ changes: [{ w, next }], delta: w.model.sizeBytes, cost: w.model.sizeBytes });
      }
    }
    for (const p of onHi) {
      for (const q of onLo) {
        const delta = p.model.sizeBytes - q.model.sizeBytes;
        if (delta <= 0) continue;
        const np = replaced(p, hi, lo);
        const nq = replaced(q, lo, hi);
        if (np === null || nq === null) continue;
        candidates.push({
          changes: [
            { w: p, next: np },
            { w: q, next: nq },
          ],
          delta,
          cost: p.model.sizeBytes + q.model.sizeBytes,
        });
      }
    }
    // Only changes that narrow the gap: the new gap |gap - 2 delta| must be smaller.
    const useful = candidates
      .filter((o) => o.delta < gap)
      .sort((x, y) => Math.abs(gap - 2 * x.delta) - Math.abs(gap - 2 * y.delta) || x.cost - y.cost);
    for (const o of useful) {
      const extra = o.changes.reduce((n, ch) => n + costOf(ch.w, ch.next) - costOf(ch.w, ch.w.replicas), 0);
      if (movedBytes + extra > options.maxMoveBytes) {
        limited = true;
        continue;
      }
      for (const ch of o.changes) apply(ch.w, ch.next);
      return true;
    }
    return false;
  };
  for (let round = 0; round < rounds; round++) {
    const c = count();
    const mean = [...c.bytes.values()].reduce((a, b) => a + b, 0) / targets.length;
    const byBytes = [...targets].sort((a, b) => c.bytes.get(a)! - c.bytes.get(b)! || a - b);
    if (c.bytes.get(byBytes[byBytes.length - 1]!)! - c.bytes.get(byBytes[0]!)! <= tolerance * mean) break;
    // The heaviest and the lightest broker first; when racks forbid every exchange between them (a partition may
    // not lose a rack), the next pairs.
    let done = false;
    for (const hi of [...byBytes].reverse()) {
      for (const lo of byBytes) {
        const gap = c.bytes.get(hi)! - c.bytes.get(lo)!;
        if (gap <= tolerance * mean) break;
        if (narrowBytes(hi, lo, gap, c.replicas.get(hi)! > c.replicas.get(lo)!)) {
          done = true;
          break;
        }
      }
      if (done) break;
    }
    if (!done) break;
  }

  // 4. Preferred leaders: put a less-leading replica first; no data moves.
  for (let round = 0; round < rounds; round++) {
    const c = count();
    const byLeaders = [...targets].sort((a, b) => c.leaders.get(a)! - c.leaders.get(b)! || a - b);
    let changed = false;
    for (const hi of [...byLeaders].reverse()) {
      for (const lo of byLeaders) {
        if (c.leaders.get(hi)! - c.leaders.get(lo)! < 2) break;
        const w = work.find((x) => x.replicas[0] === hi && x.replicas.includes(lo));
        if (w === undefined) continue;
        const next = [lo, ...w.replicas.filter((r) => r !== lo)];
        changed = apply(w, next);
        if (changed) break;
      }
      if (changed) break;
    }
    if (!changed) break;
  }

  const moves: PartitionMove[] = work
    .filter((w) => w.replicas.join(',') !== w.model.replicas.join(','))
    .map((w) => ({
      topic: w.model.topic,
      partition: w.model.partition,
      from: w.model.replicas,
      to: w.replicas,
      movedBytes: costOf(w, w.replicas),
    }));
  return { moves, movedBytes, before, after: loads(brokers, work), complete: !limited };
}

function loads(brokers: readonly BrokerModel[], work: readonly Working[]): BrokerLoad[] {
  return [...brokers]
    .sort((a, b) => a.id - b.id)
    .map((b) => {
      let replicas = 0;
      let leaders = 0;
      let bytes = 0;
      for (const w of work) {
        if (!w.replicas.includes(b.id)) continue;
        replicas++;
        bytes += w.model.sizeBytes;
        if (w.replicas[0] === b.id) leaders++;
      }
      return { id: b.id, replicas, leaders, bytes };
    });
}
