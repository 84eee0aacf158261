// The cleaner's I/O throttle, log.cleaner.io.max.bytes.per.second, as Kafka's Throttler: the cleaning reports
// the bytes it reads and writes; every check interval (100 ms), if the bytes since the last check came faster
// than the rate, it waits as long as the rate says those bytes should have taken. The rate can change at any
// time (a dynamic broker config); the next check uses it. Shared by every cleaning of a log directory.

/** Kafka's default for log.cleaner.io.max.bytes.per.second (Double.MaxValue): no throttling. */
export const UNTHROTTLED = Number.MAX_VALUE;

const CHECK_INTERVAL_MS = 100;

export interface ThrottlerOptions {
  bytesPerSecond: number;
  /** Monotonic milliseconds; injected by tests. */
  now?: () => number;
  /** Waits `ms`; injected by tests. */
  sleep?: (ms: number) => Promise<void>;
}

export class Throttler {
  bytesPerSecond: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private periodStartMs: number;
  private observed = 0;
  private waitedMsTotal = 0;

  constructor(options: ThrottlerOptions) {
    this.bytesPerSecond = options.bytesPerSecond;
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.periodStartMs = this.now();
  }

  /** Milliseconds spent waiting so far (for tests and operators). */
  get waitedMs(): number {
    return this.waitedMsTotal;
  }

  /**
   * Counts `bytes` of cleaner I/O. Returns a promise to await when the cleaning must slow down, else null (no
   * promise on the common path: this is called once per batch).
   */
  maybeThrottle(bytes: number): Promise<void> | null {
    if (this.bytesPerSecond >= UNTHROTTLED) return null;
    this.observed += bytes;
    const now = this.now();
    const elapsedMs = now - this.periodStartMs;
    if (elapsedMs < CHECK_INTERVAL_MS || this.observed === 0) return null;
    const sleepMs = Math.round((this.observed * 1000) / this.bytesPerSecond - elapsedMs);
    this.observed = 0;
    if (sleepMs <= 0) {
      this.periodStartMs = now;
      return null;
    }
    this.waitedMsTotal += sleepMs;
    // The next period starts once the wait is over, as Kafka's does.
    this.periodStartMs = now + sleepMs;
    return this.sleep(sleepMs);
  }
}
