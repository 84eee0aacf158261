// Racing work that cannot be cancelled (a client call, a store opening) against a timer. Three layers need it: the
// client's admin calls, Connect's offsets stores and the console's HTTP answers; each names its own error.

/**
 * `work`, or a rejection with `onTimeout()` when it has not settled within `timeoutMs`. The work itself goes on and
 * its late result, or failure, is dropped; the timer is cleared as soon as either settles.
 */
export function settleWithin<T>(work: Promise<T>, timeoutMs: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(0, timeoutMs));
  });
  work.catch(() => {}); // a failure after the deadline has nobody to report to
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
