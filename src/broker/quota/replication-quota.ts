// Replication throttles (KIP-73), as Kafka's ReplicationQuotaManager: a broker-wide byte rate for each side
// (`leader.replication.throttled.rate` for what this broker sends as leader, `follower.replication.throttled.rate`
// for what it fetches as follower; dynamic broker configs), applied only to the replicas a topic lists in
// `leader.replication.throttled.replicas` / `follower.replication.throttled.replicas` ("partition:broker,..." or
// "*"), and never to a replica in the ISR. A reassignment (`brook reassign-partitions --throttle`) sets both, so
// moving data cannot take more than the rate from the brokers' bandwidth.
//
// Leader side: a follower fetch gets nothing for a throttled partition of a replica out of the ISR while the rate is
// over; follower side: such partitions are left out of the fetch. The bytes of throttled partitions are recorded.
// The rate is measured over replication.quota.window.num x replication.quota.window.size.seconds.

import type { TopicConfigs } from '../topic-configs.js';
import { type RateWindow, WindowedRate } from './rate.js';

export type ReplicationSide = 'leader' | 'follower';

type ThrottledSet = 'all' | ReadonlySet<number>;
const NONE: ThrottledSet = new Set<number>();

export class ReplicationQuota {
  private readonly rate: WindowedRate;
  private boundValue = Number.POSITIVE_INFINITY;
  /** Parsed throttled-replica lists, per topic overrides object (a new object after each change). */
  private readonly parsed = new WeakMap<ReadonlyMap<string, string>, ThrottledSet>();

  constructor(
    readonly side: ReplicationSide,
    private readonly brokerId: number,
    private readonly topicConfigs: TopicConfigs,
    window: RateWindow,
  ) {
    this.rate = new WindowedRate(window);
  }

  get configKey(): string {
    return `${this.side}.replication.throttled.replicas`;
  }

  get bound(): number {
    return this.boundValue;
  }

  /** Reads the rate from the broker's merged config (`<side>.replication.throttled.rate`). */
  refreshRate(): void {
    const text = this.topicConfigs.mergedBrokerConfig().get(`${this.side}.replication.throttled.rate`);
    const n = text === undefined ? Number.NaN : Number(text);
    // Long.MAX_VALUE, Kafka's default, is no throttle at all.
    this.boundValue = Number.isFinite(n) && n >= 0 && n < 2 ** 63 - 1024 ? n : Number.POSITIVE_INFINITY;
  }

  /** Whether this broker's replica of the partition is listed for this side. */
  isThrottled(topic: string, partition: number): boolean {
    if (this.boundValue === Number.POSITIVE_INFINITY) return false;
    const overrides = this.topicConfigs.overridesFor(topic);
    let set = this.parsed.get(overrides);
    if (set === undefined) {
      set = parseThrottledReplicas(overrides.get(this.configKey), this.brokerId);
      this.parsed.set(overrides, set);
    }
    return set === 'all' || set.has(partition);
  }

  isQuotaExceeded(nowMs: number): boolean {
    if (this.boundValue === Number.POSITIVE_INFINITY) return false;
    return this.rate.measure(nowMs) > this.boundValue;
  }

  record(bytes: number, nowMs: number): void {
    if (this.boundValue === Number.POSITIVE_INFINITY || bytes <= 0) return;
    this.rate.record(bytes, nowMs);
  }

  /** The measured rate in bytes/s (for tests and the bench). */
  measuredRate(nowMs: number): number {
    return this.rate.measure(nowMs);
  }
}

/**
 * Kafka's parseThrottledPartitions: "*" throttles every partition; otherwise the partitions whose listed broker is
 * this one ("0:101,1:102" on broker 101 gives partition 0). Malformed entries are skipped (the config was validated
 * when written).
 */
export function parseThrottledReplicas(text: string | undefined, brokerId: number): ThrottledSet {
  if (text === undefined || text.trim() === '') return NONE;
  if (text.trim() === '*') return 'all';
  const partitions = new Set<number>();
  for (const item of text.split(',')) {
    const [p, b] = item.trim().split(':');
    if (Number(b) === brokerId && p !== undefined && /^\d+$/.test(p.trim())) partitions.add(Number(p));
  }
  return partitions;
}
