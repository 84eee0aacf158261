// The pause of a source task's poll loop between empty polls: stop() must end it at once, so that a worker
// stopping a task does not wait out a poll interval.

export class InterruptibleSleep {
  private stoppedValue = false;
  private wake: (() => void) | null = null;

  get stopped(): boolean {
    return this.stoppedValue;
  }

  /** Resolves after `ms`, or at once when stopped (before or during the wait). */
  sleep(ms: number): Promise<void> {
    if (this.stoppedValue) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.wake === done) self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }

  /** Ends the current wait and every later one. */
  stop(): void {
    this.stoppedValue = true;
    this.wake?.();
  }
}
