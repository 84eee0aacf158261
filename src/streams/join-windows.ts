// JoinWindows (Kafka's): how far apart in time two records of a stream-stream join may be. A record of the left
// stream at t joins right records in [t - before, t + after]; a right record at t joins left records in
// [t - after, t + before]. The grace period lets out-of-order records join until stream time passes a window's
// end plus grace; after that, left and outer joins emit their unmatched records (Kafka's KIP-633 behaviour of
// ofTimeDifferenceWithNoGrace and ofTimeDifferenceAndGrace).

export class JoinWindows {
  private constructor(
    readonly beforeMs: number,
    readonly afterMs: number,
    readonly graceMs: number,
  ) {
    if (beforeMs + afterMs < 0)
      throw new RangeError('Window interval (ie, beforeMs+afterMs) must not be negative.');
    if (!(graceMs >= 0)) throw new RangeError('Grace period must not be negative.');
  }

  static ofTimeDifferenceWithNoGrace(timeDifferenceMs: number): JoinWindows {
    if (!(timeDifferenceMs >= 0)) throw new RangeError('Time difference must not be negative.');
    return new JoinWindows(timeDifferenceMs, timeDifferenceMs, 0);
  }

  static ofTimeDifferenceAndGrace(timeDifferenceMs: number, graceMs: number): JoinWindows {
    if (!(timeDifferenceMs >= 0)) throw new RangeError('Time difference must not be negative.');
    return new JoinWindows(timeDifferenceMs, timeDifferenceMs, graceMs);
  }

  /** How much earlier a right record may be than the left one it joins. */
  before(timeDifferenceMs: number): JoinWindows {
    return new JoinWindows(timeDifferenceMs, this.afterMs, this.graceMs);
  }

  /** How much later a right record may be than the left one it joins. */
  after(timeDifferenceMs: number): JoinWindows {
    return new JoinWindows(this.beforeMs, timeDifferenceMs, this.graceMs);
  }

  /** The span of one join window (the window stores' segment size). */
  size(): number {
    return this.beforeMs + this.afterMs;
  }

  gracePeriodMs(): number {
    return this.graceMs;
  }
}
