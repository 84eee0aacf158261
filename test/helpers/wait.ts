/** Polls `condition` every 100 ms until it holds or `timeoutMs` passes; the failure message includes `describe()`. */
export async function waitUntil(
  condition: () => boolean,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting:\n${describe()}`);
    await sleep(100);
  }
}

/**
 * Polls the async `condition` every 200 ms until it holds; after `timeoutMs` fails with "timed out waiting for
 * `what`". For conditions read over the wire (a REST status, a topic), which waitUntil's synchronous ones are not.
 */
export async function eventually(
  condition: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `read` every 50 ms until it answers something other than null, and answers that. */
export async function untilValue<T>(
  what: string,
  read: () => Promise<T | null>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
