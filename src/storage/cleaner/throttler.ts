// The cleaner's I/O throttle, log.cleaner.io.max.bytes.per.second, as Kafka's Throttler: the cleaning reports
// the bytes it reads and writes; every check interval (100 ms), if the bytes since the last check came faster
// than the rate, it waits as long as the rate says those bytes should have taken. Two departures, both so that
// the rate holds for short, bursty passes: a period is also checked as soon as its bytes exceed what the rate
// allows for a whole interval (a pass that reads 64 KiB at a time and ends within 100 ms would otherwise never
// wait), and a new rate (a dynamic broker config) starts a new period, so time spent idle or at the old rate is
// no credit. Shared by every cleaning of a log directory.

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
  private rate: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private periodStartMs: number;
  private observed = 0;
  private waitedMsTotal = 0;

  constructor(options: ThrottlerOptions) {
    this.rate = options.bytesPerSecond;
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.periodStartMs = this.now();
  }

  get bytesPerSecond(): number {
    return this.rate;
  }

  /** A new rate starts a new period (see the file header). */
  set bytesPerSecond(bytesPerSecond: number) {
    if (bytesPerSecond === this.rate) return;
    this.rate = bytesPerSecond;
    this.periodStartMs = this.now();
    this.observed = 0;
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
    if (this.rate >= UNTHROTTLED) return null;
    this.observed += bytes;
    const now = this.now();
    const elapsedMs = now - this.periodStartMs;
    const allowance = (this.rate * CHECK_INTERVAL_MS) / 1000;
    if ((elapsedMs < CHECK_INTERVAL_MS && this.observed <= allowance) || this.observed === 0) return null;
    const sleepMs = Math.round((this.observed * 1000) / this.rate - elapsedMs);
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
