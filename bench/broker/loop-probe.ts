// Loaded into the broker under test with `node --import` (by broker-process.ts), never by the broker itself:
// measures the broker's event-loop delay, which only the broker's own process can see. Each SIGUSR2 writes the
// delay percentiles since the previous one to the file named by BROOK_BENCH_LOOP_PROBE, with a sequence number,
// and starts a new interval; so a benchmark signals at the start and at the end of a measured window and reads
// the second answer. Without the variable it does nothing.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopProbeReport {
  sequence: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

const out = process.env.BROOK_BENCH_LOOP_PROBE;
if (out !== undefined && out !== '') {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let sequence = 0;
  process.on('SIGUSR2', () => {
    sequence++;
    const report: LoopProbeReport = {
      sequence,
      p50Ms: histogram.count > 0 ? histogram.percentile(50) / 1e6 : 0,
      p99Ms: histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0,
      maxMs: histogram.count > 0 ? histogram.max / 1e6 : 0,
      samples: histogram.count,
    };
    writeFileSync(out, JSON.stringify(report));
    histogram.reset();
  });
}
