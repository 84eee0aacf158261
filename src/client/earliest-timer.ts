// One timer for many deadlines: it fires once, at the earliest deadline it was armed for since it last fired or
// was cancelled. The producer keeps two (batches reaching delivery.timeout.ms, retries waiting out their backoff),
// so that a thousand pending batches cost one timer each, not a thousand.

export class EarliestTimer {
  private timer: NodeJS.Timeout | null = null;
  private atMs = 0;

  constructor(private readonly onFire: () => void) {}

  /** Makes sure the callback runs by `atMs` (a Date.now() time); an earlier arming stands. */
  armBy(atMs: number): void {
    if (this.timer !== null) {
      if (this.atMs <= atMs) return;
      clearTimeout(this.timer);
    }
    this.atMs = atMs;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.onFire();
      },
      Math.max(1, atMs - Date.now()),
    );
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
