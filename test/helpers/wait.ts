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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
