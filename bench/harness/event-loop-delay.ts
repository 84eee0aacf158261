// Event-loop delay of this process over an interval, from perf_hooks.monitorEventLoopDelay: how late timers
// ran, which is how long a request could wait before its handler starts. A broker measures itself with this
// and reports the summary; a load generator measures itself to show it was not the bottleneck.
import { monitorEventLoopDelay } from 'node:perf_hooks';
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
        const empty = histogram.count === 0;
        const ms = (ns: number): number => (empty ? 0 : ns / 1e6);
        result = {
          unit: 'ms',
          count: histogram.count,
          p50: ms(histogram.percentile(50)),
          p99: ms(histogram.percentile(99)),
          max: ms(histogram.max),
          mean: ms(histogram.mean),
        };
      }
      return result;
    },
  };
}
