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

export class Purgatory {
  private readonly watchers = new Map<string, Set<Parked>>();
  private parked = 0;

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
      let set = this.watchers.get(key);
      if (set === undefined) {
        set = new Set();
        this.watchers.set(key, set);
      }
      set.add(entry);
    }
    this.parked++;
    return false;
  }

  /** Re-checks every operation watching `key` (new data appended, high watermark moved, ...). */
  checkAndComplete(key: string): number {
    const set = this.watchers.get(key);
    if (set === undefined) return 0;
    let completed = 0;
    for (const entry of [...set]) {
      if (!entry.done && entry.op.tryComplete()) {
        this.finish(entry, true);
        completed++;
      }
    }
    return completed;
  }

  /** Completes everything now (shutdown): each operation gets a last check of its condition. */
  completeAll(): void {
    const all = new Set<Parked>();
    for (const set of this.watchers.values()) for (const entry of set) all.add(entry);
    for (const entry of all) this.finish(entry, entry.op.tryComplete());
  }

  private finish(entry: Parked, satisfied: boolean): void {
    if (entry.done) return;
    entry.done = true;
    entry.timer?.cancel();
    for (const key of entry.keys) {
      const set = this.watchers.get(key);
      if (set === undefined) continue;
      set.delete(entry);
      if (set.size === 0) this.watchers.delete(key);
    }
    this.parked--;
    assert(this.parked >= 0, `${this.name} purgatory: more operations finished than parked`);
    entry.op.onComplete(satisfied);
  }
}
