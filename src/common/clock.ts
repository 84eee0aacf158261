// Time is injected so that coordinators, the controller and replication can run under a simulated clock: their
// reads of the time and their timers (the purgatory's deadlines, the ISR check, the replica fetchers' backoffs)
// go through a Clock. The system clock uses the process's timers; a ManualClock fires its timers only when it is
// advanced, in the order of their deadlines, so that a seeded simulation replays the same way.

import { assert } from './assert.js';

/** A timer set on a clock: fires once unless cancelled. */
export interface Timer {
  /** The timer will not fire (a no-op once it fired or was cancelled). */
  cancel(): void;
  /** The timer does not keep the process alive (Node's unref); nothing under a manual clock does. */
  unref(): Timer;
}

export interface Clock {
  /** Wall-clock milliseconds since the epoch (record timestamps, retention). */
  nowMs(): number;
  /** Monotonic milliseconds (timeouts, lag), never goes back. */
  monotonicMs(): number;
  /** Calls `fn` once, `delayMs` (monotonic) from now. */
  setTimer(delayMs: number, fn: () => void): Timer;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  setTimer: (delayMs, fn) => {
    const handle = setTimeout(fn, delayMs);
    const timer: Timer = {
      cancel: () => clearTimeout(handle),
      unref: () => {
        handle.unref();
        return timer;
      },
    };
    return timer;
  },
};

/** Resolves after `ms` on `clock` (under a manual clock: when it is advanced that far). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

interface ManualTimer {
  readonly dueMs: number;
  /** Order of setting: timers due at the same time fire in the order they were set. */
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Bound of timers pending on a manual clock: a leak in a simulation stops loudly instead of slowing it down. */
const MANUAL_TIMERS_MAX = 100_000;

/** A clock that moves only when told to; for tests and the simulation. */
export class ManualClock implements Clock {
  private readonly timers: ManualTimer[] = [];
  private seq = 0;

  constructor(
    private wallMs = 1_700_000_000_000,
    private monoMs = 0,
  ) {}
  nowMs(): number {
    return this.wallMs;
  }
  monotonicMs(): number {
    return this.monoMs;
  }

  setTimer(delayMs: number, fn: () => void): Timer {
    assert(this.timers.length < MANUAL_TIMERS_MAX, `more than ${MANUAL_TIMERS_MAX} timers pending`);
    const entry: ManualTimer = {
      dueMs: this.monoMs + Math.max(0, delayMs),
      seq: this.seq++,
      fn,
      cancelled: false,
    };
    this.timers.push(entry);
    const timer: Timer = {
      cancel: () => {
        entry.cancelled = true;
      },
      unref: () => timer,
    };
    return timer;
  }

  /** Timers set and neither fired nor cancelled. */
  get pendingTimers(): number {
    let n = 0;
    for (const t of this.timers) if (!t.cancelled) n++;
    return n;
  }

  /** The deadline of the next timer to fire, or null when none is pending. */
  nextTimerDueMs(): number | null {
    const next = this.nextTimer();
    return next === null ? null : next.dueMs;
  }

  /**
   * Moves both clocks by `ms`, firing every timer due on the way in the order of its deadline (and of setting),
   * each with the clock at its deadline. A timer set by a firing one fires too when it is due within `ms`.
   */
  advance(ms: number): void {
    assert(ms >= 0, `a clock does not go back (${ms} ms)`);
    const target = this.monoMs + ms;
    for (;;) {
      const next = this.nextTimer();
      if (next === null || next.dueMs > target) break;
      this.moveTo(next.dueMs);
      this.timers.splice(this.timers.indexOf(next), 1);
      next.fn();
    }
    this.moveTo(target);
  }

  private moveTo(monoMs: number): void {
    this.wallMs += monoMs - this.monoMs;
    this.monoMs = monoMs;
  }

  private nextTimer(): ManualTimer | null {
    let best: ManualTimer | null = null;
    for (let i = this.timers.length - 1; i >= 0; i--) {
      const t = this.timers[i]!;
      if (t.cancelled) {
        this.timers.splice(i, 1);
        continue;
      }
      if (best === null || t.dueMs < best.dueMs || (t.dueMs === best.dueMs && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
