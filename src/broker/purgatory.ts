// Purgatory: requests that wait for something (acks=all produce waiting for the high watermark, a long-poll fetch
// waiting for fetch.min.bytes) park here, keyed by the partitions they watch. Each delayed operation completes
// exactly once, either because a watched key changed and its condition now holds, or because its deadline passed.
//
// Ownership: the purgatory owns the timers and the key -> operations index. Operations own their own result.
// The number of parked operations is bounded; when full, a new operation is completed at once (its condition is
// checked one last time), which is the same outcome as a timeout and keeps memory flat under overload.

import { assert } from '../common/assert.js';
import { type Clock, systemClock, type Timer } from '../common/clock.js';

export interface DelayedOperation {
  /** Checks the condition; returns true when the operation can complete now. Must not await. */
  tryComplete(): boolean;
  /** Called exactly once, with whether the condition held (true) or the deadline passed (false). */
  onComplete(satisfied: boolean): void;
}

interface Parked {
  readonly op: DelayedOperation;
  readonly keys: readonly string[];
  timer: Timer | undefined;
  done: boolean;
}

/**
 * Finished operations still listed under some key, past which every list is swept (Kafka's purgatory purges
 * completed operations the same way, at purge.interval.requests).
 */
const STALE_ENTRIES_SWEEP = 1000;

export class Purgatory {
  /**
   * Parked operations by watched key. A finished operation stays listed until its key is checked again or a sweep
   * runs, and a key's list stays when it empties: removing entries one by one from a Set, and the key from the
   * Map, made V8 allocate a new hash table each time a set emptied (one long poll per tail consumer, hundreds a
   * second), tables that lived as long as the purgatory and were promoted at the next scavenge.
   */
  private readonly watchers = new Map<string, Parked[]>();
  private parked = 0;
  /** List entries of finished operations not yet removed. */
  private stale = 0;
  /**
   * checkAndComplete calls running (an onComplete may check again, re-entrantly): lists are only appended to
   * while one runs, and compacted when the outermost ends, so no iteration sees entries move.
   */
  private checking = 0;

  constructor(
    readonly name: string,
    private readonly parkedMax: number,
    /** Whose timers fire the deadlines: the system's in a broker, a manual one in the simulation. */
    private readonly clock: Clock = systemClock,
  ) {
    assert(parkedMax > 0, 'purgatory bound must be positive');
  }

  get size(): number {
    return this.parked;
  }

  /** List entries kept for finished operations (bounded by the sweep; for tests). */
  get staleEntries(): number {
    return this.stale;
  }

  /**
   * Completes the operation now if it can; otherwise parks it until a watched key is triggered or `timeoutMs`
   * passes. Returns true when it completed immediately.
   */
  tryCompleteElseWatch(op: DelayedOperation, keys: readonly string[], timeoutMs: number): boolean {
    if (op.tryComplete()) {
      op.onComplete(true);
      return true;
    }
    if (timeoutMs <= 0 || this.parked >= this.parkedMax) {
      op.onComplete(op.tryComplete());
      return true;
    }
    const entry: Parked = { op, keys, timer: undefined, done: false };
    entry.timer = this.clock.setTimer(timeoutMs, () => this.finish(entry, op.tryComplete()));
    for (const key of keys) {
      const list = this.watchers.get(key);
      if (list === undefined) this.watchers.set(key, [entry]);
      else list.push(entry);
    }
    this.parked++;
    return false;
  }

  /** Re-checks every operation watching `key` (new data appended, high watermark moved, ...). */
  checkAndComplete(key: string): number {
    const list = this.watchers.get(key);
    if (list === undefined) return 0;
    let completed = 0;
    // Those parked while this runs (an onComplete may park a new operation here) were checked as they parked.
    const checked = list.length;
    this.checking++;
    try {
      for (let i = 0; i < checked; i++) {
        const entry = list[i]!;
        if (!entry.done && entry.op.tryComplete()) {
          this.finish(entry, true);
          completed++;
        }
      }
    } finally {
      this.checking--;
    }
    if (this.checking === 0) {
      this.removeFinished(list);
      this.maybeSweep();
    }
    return completed;
  }

  /** Completes everything now (shutdown): each operation gets a last check of its condition. */
  completeAll(): void {
    const all = new Set<Parked>();
    for (const list of this.watchers.values()) for (const entry of list) if (!entry.done) all.add(entry);
    for (const entry of all) this.finish(entry, entry.op.tryComplete());
    if (this.checking === 0) this.sweep();
  }

  private finish(entry: Parked, satisfied: boolean): void {
    if (entry.done) return;
    entry.done = true;
    entry.timer?.cancel();
    this.stale += entry.keys.length;
    this.parked--;
    assert(this.parked >= 0, `${this.name} purgatory: more operations finished than parked`);
    entry.op.onComplete(satisfied);
    this.maybeSweep();
  }

  /** Operations that time out on keys nobody checks would otherwise stay listed. */
  private maybeSweep(): void {
    if (this.checking === 0 && this.stale > STALE_ENTRIES_SWEEP && this.stale > this.parked) this.sweep();
  }

  /** Drops the finished operations of one key's list, in place (no new array). */
  private removeFinished(list: Parked[]): void {
    let kept = 0;
    for (let i = 0; i < list.length; i++) {
      const entry = list[i]!;
      if (entry.done) continue;
      list[kept++] = entry;
    }
    this.stale -= list.length - kept;
    list.length = kept;
  }

  /** Drops every finished operation from every list, and the lists left empty. */
  private sweep(): void {
    for (const [key, list] of this.watchers) {
      this.removeFinished(list);
      if (list.length === 0) this.watchers.delete(key);
    }
    assert(this.stale === 0, `${this.name} purgatory: finished entries left after a sweep`);
  }
}
