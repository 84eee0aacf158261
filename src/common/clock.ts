// Time is injected so that coordinators, the controller and replication can run under a simulated clock.

export interface Clock {
  /** Wall-clock milliseconds since the epoch (record timestamps, retention). */
  nowMs(): number;
  /** Monotonic milliseconds (timeouts, lag), never goes back. */
  monotonicMs(): number;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/** A clock that moves only when told to; for tests and the simulation. */
export class ManualClock implements Clock {
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
  advance(ms: number): void {
    this.wallMs += ms;
    this.monoMs += ms;
  }
}
