// A tight loop for CPU-bound micro-benchmarks (codecs, CRC): no awaits inside the clock, so the figure is the
// work itself, not the event loop's scheduling.
import { megabytesPerSecond } from './ratio.js';

/** Runs `step` over and over for about `durationMs`, after one warm-up call; returns MB/s of `bytesPerStep`. */
export function stepThroughput(durationMs: number, bytesPerStep: number, step: () => void): number {
  step();
  let steps = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(durationMs) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    step();
    steps++;
    now = process.hrtime.bigint();
  }
  return megabytesPerSecond(steps * bytesPerStep, Number(now - start) / 1e9);
}
