// The admin client's calls in progress, for close(): Kafka's Admin.close(Duration) refuses new calls at once
// (TimeoutException "not accepting new calls"), lets the calls in progress finish within the timeout, and then
// fails those still running with a TimeoutException; close() without a timeout waits for them all (each ends by its
// own deadline), close(0) fails them at once. A call cut off this way goes on in the background until the
// connections close under it; its late result is dropped. Owned by one Admin, from construction to close.

import assert from 'node:assert/strict';
import { RequestTimeoutError } from './errors.js';

/** Node's longest timer (about 24.8 days): a longer wait is no timer at all (close without a timeout). */
const TIMER_MS_MAX = 2 ** 31 - 1;

export class AdminCalls {
  /** Per call in progress, what fails it when close() cuts it off. */
  private readonly inProgress = new Set<(err: Error) => void>();
  private closing = false;
  /** The waits of close() calls (a later one with a shorter timeout cuts the calls off sooner), told when the last
   * call in progress ends. */
  private readonly idleWaiters = new Set<() => void>();

  /** `run` as one call of the client: refused once close() began, cut off by close() past its timeout. */
  track<T>(run: () => Promise<T>): Promise<T> {
    if (this.closing) {
      return Promise.reject(new RequestTimeoutError('The admin client is not accepting new calls.'));
    }
    let cutOff!: (err: Error) => void;
    const cut = new Promise<never>((_, reject) => {
      cutOff = reject;
    });
    this.inProgress.add(cutOff);
    const call = run();
    call.catch(() => {}); // a failure after the cut has nobody to report to
    const outcome = Promise.race([call, cut]);
    const done = (): void => {
      this.inProgress.delete(cutOff);
      if (this.inProgress.size === 0) for (const waiter of [...this.idleWaiters]) waiter();
    };
    outcome.then(done, done);
    return outcome;
  }

  /** How many calls are in progress. */
  get count(): number {
    return this.inProgress.size;
  }

  /**
   * Refuses new calls, waits up to `timeoutMs` (infinite: no limit) for the calls in progress, and fails the ones
   * still running with a timeout.
   */
  async close(timeoutMs: number): Promise<void> {
    assert.ok(timeoutMs >= 0, 'the close timeout is checked by the caller');
    this.closing = true;
    if (this.inProgress.size > 0 && timeoutMs > 0) await this.allSettled(timeoutMs);
    const left = [...this.inProgress];
    this.inProgress.clear();
    for (const cutOff of left) {
      cutOff(
        new RequestTimeoutError(
          `The admin client was closed before the call completed (close timeout ${timeoutMs} ms).`,
        ),
      );
    }
  }

  /** Resolves once no call is in progress, or after `timeoutMs`. */
  private allSettled(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const end = (): void => {
        clearTimeout(timer);
        this.idleWaiters.delete(end);
        resolve();
      };
      this.idleWaiters.add(end);
      if (timeoutMs <= TIMER_MS_MAX) timer = setTimeout(end, timeoutMs);
    });
  }
}
