// The start wait of the broker test helper is bounded by progress: it fails a start that stalls, keeps waiting
// while the process moves, and still ends a start that moves forever.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuTicks, watchProgress } from './broker-process.js';

function watch(
  progress: () => string,
  stallMs: number,
  timeoutMs: number,
): Promise<{ reason: string; afterMs: number }> {
  const startedMs = Date.now();
  return new Promise((resolve) => {
    watchProgress(
      progress,
      (reason) => resolve({ reason, afterMs: Date.now() - startedMs }),
      stallMs,
      timeoutMs,
      20,
    );
  });
}

describe('broker start wait', () => {
  it('fails a start that shows no progress for the stall bound', async () => {
    const { reason, afterMs } = await watch(() => 'same', 200, 60_000);
    assert.match(reason, /no progress/);
    assert.ok(afterMs >= 200, `stalled after ${afterMs} ms`);
  });

  it('keeps waiting past the stall bound while progress advances, up to the overall bound', async () => {
    let n = 0;
    const { reason, afterMs } = await watch(() => String(n++), 100, 600);
    assert.match(reason, /still starting/);
    assert.ok(afterMs >= 600, `gave up after ${afterMs} ms, before the overall bound`);
  });

  it('stops watching when told to: no stall is reported afterwards', async () => {
    let stalled = false;
    const stop = watchProgress(
      () => 'same',
      () => (stalled = true),
      50,
      60_000,
      10,
    );
    stop();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(stalled, false);
  });

  it('reads the CPU time a process spent, which grows as it computes (where /proc exists)', {
    skip: process.platform !== 'linux',
  }, () => {
    const before = cpuTicks(process.pid);
    assert.ok(before !== null && Number.isFinite(before), `ticks ${before}`);
    // Compute until a tick passes; a generous bound, since a loaded machine gives this process little time.
    const endMs = Date.now() + 30_000;
    let x = 0;
    while (cpuTicks(process.pid)! <= before && Date.now() < endMs) {
      for (let i = 0; i < 100_000; i++) x += Math.sqrt(i);
    }
    assert.ok(x > 0);
    assert.ok(cpuTicks(process.pid)! > before, 'CPU ticks advance while computing');
    assert.equal(cpuTicks(2 ** 30), null, 'no such process');
  });
});
