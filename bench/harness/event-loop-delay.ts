// Event-loop delay of this process over an interval, from perf_hooks.monitorEventLoopDelay: how late timers
// ran, which is how long a request could wait before its handler starts. A broker measures itself with this
// and reports the summary; a load generator measures itself to show it was not the bottleneck.
//
// Node's histogram records the whole time between two of its timer's runs, that is the sampling interval plus
// the delay: an idle process shows a p50 of about the resolution (10.2 ms at the default 10). The delay is that
// minus the resolution, which is what these summaries report (before 2026-12-03 the bench figures named "loop
// p99" included the 10 ms interval).
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { assert } from '../../src/common/assert.js';

/** Event-loop delay percentiles in milliseconds. */
export interface EventLoopDelaySummary {
  unit: 'ms';
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface EventLoopDelayMonitor {
  /** Stops sampling and returns the summary of the whole interval. */
  stop(): EventLoopDelaySummary;
}

/** Starts sampling the event loop every `resolutionMs` (Node's default is 10 ms; finer costs more). */
export function monitorEventLoop(resolutionMs = 10): EventLoopDelayMonitor {
  assert(Number.isInteger(resolutionMs) && resolutionMs >= 1, 'resolution must be a whole number of ms >= 1');
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let result: EventLoopDelaySummary | undefined;
  return {
    stop() {
      if (result === undefined) {
        histogram.disable();
        // The histogram holds nanoseconds; with no sample yet its min/max are sentinels, so report zeros.
        result = { unit: 'ms', ...delaySummary(histogram, resolutionMs) };
      }
      return result;
    },
  };
}

/**
 * Delay percentiles in ms from a monitorEventLoopDelay histogram sampled every `resolutionMs`: each recorded
 * interval less the resolution (never below 0). With no sample yet the histogram's min/max are sentinels, so
 * every figure is 0.
 */
export function delaySummary(
  histogram: IntervalHistogram,
  resolutionMs: number,
): { count: number; p50: number; p99: number; max: number; mean: number } {
  const count = histogram.count;
  const ms = (ns: number): number => (count === 0 ? 0 : Math.max(0, ns / 1e6 - resolutionMs));
  return {
    count,
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    mean: ms(histogram.mean),
  };
}
