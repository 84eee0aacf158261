// Units and ratios. Throughputs are in decimal megabytes per second (MB/s, 10^6 bytes) unless a name says MiB;
// ratios divide a measured figure by a limit of the same run and the same unit (R_disk, R_net, R_null).
import { assert } from '../../src/common/assert.js';
import type { Summary } from './repeat.js';

export const bytesPerMegabyte = 1e6;
export const bytesPerMebibyte = 1024 * 1024;

export function megabytesPerSecond(bytes: number, seconds: number): number {
  assert(seconds > 0, `a throughput needs a positive duration, got ${seconds} s`);
  return bytes / bytesPerMegabyte / seconds;
}

/** As kafka-producer-perf-test counts its "MB/sec" (which are MiB). */
export function mebibytesPerSecond(bytes: number, seconds: number): number {
  assert(seconds > 0, `a throughput needs a positive duration, got ${seconds} s`);
  return bytes / bytesPerMebibyte / seconds;
}

export function ratio(measured: number, limit: number): number {
  assert(limit > 0, `a limit must be positive to divide by, got ${limit}`);
  return measured / limit;
}

/** A ratio between two repeated figures: the ratio of medians and the widest ratio the ranges allow. */
export interface RatioSummary {
  median: number;
  min: number;
  max: number;
}

/**
 * `measured` over `limit` (both repeated, same unit). The range is conservative: lowest measured over highest
 * limit up to highest measured over lowest limit, since the repetitions of the two are not paired.
 */
export function ratioOfSummaries(measured: Summary, limit: Summary): RatioSummary {
  assert(limit.min > 0, `a limit must be positive to divide by, got a minimum of ${limit.min}`);
  return {
    median: measured.median / limit.median,
    min: measured.min / limit.max,
    max: measured.max / limit.min,
  };
}
