// A latency histogram with log-linear buckets, in the manner of HdrHistogram: every power of two is split into
// 128 equal sub-buckets, so any reported value is within 1/128 (under 0.8 %) of a value that was recorded.
// Memory is fixed (about 6,000 counters) whatever the values, and recording is a few arithmetic operations,
// so it can sit on a hot path. Values are non-negative numbers in one unit chosen by the caller (microseconds
// for produce latency); fractions are rounded to the nearest integer unit. Not shared between threads.
//
// We write our own rather than depend on hdr-histogram-js: the package qualifies (no install script), but it
// brings three runtime dependencies and a WebAssembly build for what is here a hundred lines.
import { assert } from '../../src/common/assert.js';

/** Sub-buckets per power of two; 2^7 = 128 bounds the relative error of a reported value by 1/128. */
const subBucketBits = 7;
const subBucketCount = 1 << subBucketBits;
/** Values below this are counted exactly, one counter per integer. */
const exactBelow = 2 * subBucketCount;
/** Largest value kept apart; above it values are clamped (2^53, the largest exact integer in a double). */
const valueMax = Number.MAX_SAFE_INTEGER;
const powersTracked = 53 - (subBucketBits + 1);
const bucketCount = exactBelow + powersTracked * subBucketCount;

/** The percentiles every benchmark reports, as printed and as written in result lines. */
export interface LatencySummary {
  unit: string;
  count: number;
  min: number;
  mean: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export class Histogram {
  private readonly counts = new Float64Array(bucketCount);
  private total = 0;
  private sum = 0;
  private minValue = Number.POSITIVE_INFINITY;
  private maxValue = 0;

  constructor(readonly unit = 'us') {}

  get count(): number {
    return this.total;
  }

  get min(): number {
    return this.total === 0 ? 0 : this.minValue;
  }

  get max(): number {
    return this.maxValue;
  }

  get mean(): number {
    return this.total === 0 ? 0 : this.sum / this.total;
  }

  /** Records `value` (in this histogram's unit) `times` times. */
  record(value: number, times = 1): void {
    assert(Number.isFinite(value) && value >= 0, `histogram value must be finite and >= 0, got ${value}`);
    assert(Number.isInteger(times) && times > 0, `histogram count must be a positive integer, got ${times}`);
    const v = Math.min(Math.round(value), valueMax);
    this.counts[indexOf(v)]! += times;
    this.total += times;
    this.sum += v * times;
    if (v < this.minValue) this.minValue = v;
    if (v > this.maxValue) this.maxValue = v;
  }

  /** Adds every count of `other` (same unit) into this one, e.g. to combine per-connection histograms. */
  merge(other: Histogram): void {
    assert(other.unit === this.unit, `cannot merge ${other.unit} into ${this.unit}`);
    for (let i = 0; i < bucketCount; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
    this.sum += other.sum;
    if (other.total > 0) {
      this.minValue = Math.min(this.minValue, other.minValue);
      this.maxValue = Math.max(this.maxValue, other.maxValue);
    }
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.sum = 0;
    this.minValue = Number.POSITIVE_INFINITY;
    this.maxValue = 0;
  }

  /**
   * The smallest value v such that at least `percent` % of recorded values are <= v, reported as the top of
   * its bucket (like HdrHistogram's highest equivalent value) but never above the largest value recorded.
   */
  percentile(percent: number): number {
    assert(percent >= 0 && percent <= 100, `percentile must be within [0, 100], got ${percent}`);
    if (this.total === 0) return 0;
    if (percent === 0) return this.minValue;
    const rank = Math.max(1, Math.ceil((percent / 100) * this.total));
    let seen = 0;
    for (let i = 0; i < bucketCount; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(Math.max(highestEquivalent(i), this.minValue), this.maxValue);
    }
    return this.maxValue;
  }

  summary(): LatencySummary {
    return {
      unit: this.unit,
      count: this.total,
      min: this.min,
      mean: this.mean,
      p50: this.percentile(50),
      p99: this.percentile(99),
      p999: this.percentile(99.9),
      max: this.max,
    };
  }
}

/** Bucket of an integer value in [0, 2^53]. */
function indexOf(v: number): number {
  if (v < exactBelow) return v;
  const magnitude = floorLog2(v);
  const shift = magnitude - subBucketBits;
  // `sub` is within [subBucketCount, 2 * subBucketCount): the top eight bits of v.
  const sub = Math.floor(v / 2 ** shift);
  return exactBelow + (magnitude - (subBucketBits + 1)) * subBucketCount + (sub - subBucketCount);
}

/** The largest integer value that lands in bucket `index`. */
function highestEquivalent(index: number): number {
  if (index < exactBelow) return index;
  const offset = index - exactBelow;
  const magnitude = Math.floor(offset / subBucketCount) + subBucketBits + 1;
  const sub = (offset % subBucketCount) + subBucketCount;
  const shift = magnitude - subBucketBits;
  return (sub + 1) * 2 ** shift - 1;
}

/** floor(log2(v)) for integers v >= 1, exact even where Math.log2 rounds near powers of two. */
function floorLog2(v: number): number {
  let m = Math.floor(Math.log2(v));
  if (2 ** m > v) m--;
  else if (2 ** (m + 1) <= v) m++;
  return m;
}
