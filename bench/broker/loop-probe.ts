// Loaded into the broker under test with `node --import` (by broker-process.ts), never by the broker itself:
// measures the broker's event-loop delay, which only the broker's own process can see. Each SIGUSR2 writes the
// delay percentiles since the previous one to the file named by BROOK_BENCH_LOOP_PROBE, with a sequence number,
// and starts a new interval; so a benchmark signals at the start and at the end of a measured window and reads
// the second answer. Without the variable it does nothing.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { delaySummary } from '../harness/event-loop-delay.js';

export interface LoopProbeReport {
  sequence: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

const out = process.env.BROOK_BENCH_LOOP_PROBE;
if (out !== undefined && out !== '') {
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let sequence = 0;
  process.on('SIGUSR2', () => {
    sequence++;
    // The delay, not Node's raw interval (which includes the 10 ms between samples): see event-loop-delay.ts.
    const delay = delaySummary(histogram, resolutionMs);
    const report: LoopProbeReport = {
      sequence,
      p50Ms: delay.p50,
      p99Ms: delay.p99,
      maxMs: delay.max,
      samples: delay.count,
    };
    writeFileSync(out, JSON.stringify(report));
    histogram.reset();
  });
}
