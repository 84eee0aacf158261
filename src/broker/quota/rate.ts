// Kafka's windowed rate (its Rate over a SampledStat): the sum of the values recorded in the last `samples`
// windows of `windowMs` each, divided by the time those windows span. Quotas compare this rate with their bound
// and turn the excess into a throttle time (throttleTimeMs below), exactly as Kafka's ClientQuotaManager does, so a
// client sees the same throttle times from Brook as from Kafka for the same traffic.
//
// Samples: a ring of `samples + 1` slots (Kafka keeps one extra for a sample overlapping the window's start). A
// sample is complete once `windowMs` has passed since it started; the next record then starts a new one. A sample
// with no event for `samples * windowMs` is reset when measured. Not thread-shared: Node runs one at a time.

import { assert } from '../../common/assert.js';

export interface RateWindow {
  /** quota.window.num: samples kept (Kafka's default 11: ten whole windows and the current one). */
  readonly samples: number;
  /** quota.window.size.seconds, in milliseconds. */
  readonly windowMs: number;
}

interface Sample {
  value: number;
  startTimeMs: number;
  lastEventMs: number;
}

export class WindowedRate {
  private readonly ring: Sample[] = [];
  private current = 0;

  constructor(private window: RateWindow) {
    assert(window.samples >= 1 && window.windowMs >= 1, 'a rate needs at least one sample of 1 ms');
  }

  setWindow(window: RateWindow): void {
    this.window = window;
  }

  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs);
    if (nowMs - sample.startTimeMs >= this.window.windowMs) sample = this.advance(nowMs);
    sample.value += value;
    sample.lastEventMs = nowMs;
  }

  /** The rate per second over the retained samples. */
  measure(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let total = 0;
    for (const s of this.ring) total += s.value;
    return total / (this.windowSizeMs(nowMs) / 1000);
  }

  /**
   * The time the rate is measured over: from the oldest retained sample's start to now, but never less than
   * `samples - 1` whole windows (so one burst on a fresh sensor is spread over the full window, as in Kafka).
   */
  windowSizeMs(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let elapsedMs = nowMs - this.oldest(nowMs).startTimeMs;
    const fullWindows = Math.trunc(elapsedMs / this.window.windowMs);
    const minFullWindows = this.window.samples - 1;
    if (fullWindows < minFullWindows) elapsedMs += (minFullWindows - fullWindows) * this.window.windowMs;
    return Math.max(elapsedMs, 1);
  }

  private currentSample(nowMs: number): Sample {
    if (this.ring.length === 0) this.ring.push(newSample(nowMs));
    return this.ring[this.current]!;
  }

  private advance(nowMs: number): Sample {
    const slots = this.window.samples + 1;
    this.current = (this.current + 1) % slots;
    if (this.current >= this.ring.length) {
      const sample = newSample(nowMs);
      this.ring.push(sample);
      return sample;
    }
    const sample = this.ring[this.current]!;
    reset(sample, nowMs);
    return sample;
  }

  private oldest(nowMs: number): Sample {
    if (this.ring.length === 0) this.ring.push(newSample(nowMs));
    let oldest = this.ring[0]!;
    for (const s of this.ring) if (s.startTimeMs < oldest.startTimeMs) oldest = s;
    return oldest;
  }

  private purgeObsolete(nowMs: number): void {
    const expireAgeMs = this.window.samples * this.window.windowMs;
    for (const s of this.ring) if (nowMs - s.lastEventMs >= expireAgeMs) reset(s, nowMs);
  }
}

function newSample(nowMs: number): Sample {
  return { value: 0, startTimeMs: nowMs, lastEventMs: nowMs };
}

function reset(s: Sample, nowMs: number): void {
  s.value = 0;
  s.startTimeMs = nowMs;
  s.lastEventMs = nowMs;
}

/**
 * Kafka's QuotaUtils.throttleTime: with observed rate O over a window W and bound T, the delay X that brings the
 * rate back to the bound if nothing more is recorded solves O * W / (W + X) = T, so X = (O - T) / T * W.
 */
export function throttleTimeMs(observed: number, bound: number, windowSizeMs: number): number {
  return Math.round(((observed - bound) / bound) * windowSizeMs);
}

/**
 * Kafka's TokenBucket (controller mutations, KIP-599): tokens refill at `rate` per second up to a burst of
 * rate * samples * window seconds; a mutation takes its count of tokens and may drive the balance below zero.
 */
export class TokenBucket {
  private tokens = 0;
  /** Epoch 0, as Kafka starts it: the first measure (wall-clock time) finds a full bucket. */
  private lastUpdateMs = 0;

  constructor(private window: RateWindow) {}

  setWindow(window: RateWindow): void {
    this.window = window;
  }

  /** The balance now, refilled for the time since the last update. */
  measure(rate: number, nowMs: number): number {
    this.refill(rate, nowMs);
    return this.tokens;
  }

  record(rate: number, value: number, nowMs: number): void {
    this.refill(rate, nowMs);
    this.tokens = Math.min(this.burst(rate), this.tokens - value);
  }

  private burst(rate: number): number {
    return this.window.samples * (this.window.windowMs / 1000) * rate;
  }

  private refill(rate: number, nowMs: number): void {
    const elapsedMs = nowMs - this.lastUpdateMs;
    this.tokens = Math.min(this.burst(rate), this.tokens + (rate * elapsedMs) / 1000);
    this.lastUpdateMs = nowMs;
  }
}
