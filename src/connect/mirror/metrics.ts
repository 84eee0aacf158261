// MirrorSourceConnector's per-partition metrics under Kafka's names (kafka.connect.mirror:
// type=MirrorSourceConnector,target=B,topic=A.t,partition=0): record-count, byte-count, record-age-ms (now minus
// the record's timestamp when it is read), replication-latency-ms (now minus its timestamp when the target
// acknowledged it), with -min/-max/-avg for the last two as Kafka has. Kept in one process-wide registry that the
// dedicated mode exposes in Prometheus text (as the JMX exporter would name them) and in its status view.

interface Stat {
  count: number;
  sum: number;
  min: number;
  max: number;
}

export interface PartitionMetrics {
  target: string;
  topic: string;
  partition: number;
  recordCount: number;
  byteCount: number;
  recordAgeMs: Stat;
  replicationLatencyMs: Stat;
}

function stat(): Stat {
  return { count: 0, sum: 0, min: Number.POSITIVE_INFINITY, max: 0 };
}

function observe(s: Stat, v: number): void {
  s.count++;
  s.sum += v;
  if (v < s.min) s.min = v;
  if (v > s.max) s.max = v;
}

class MirrorMetricsRegistry {
  private readonly partitions = new Map<string, PartitionMetrics>();

  /** The metrics of one remote partition (tasks keep the object, so a record costs no lookup). */
  partition(target: string, topic: string, partition: number): PartitionMetrics {
    const key = `${target}\u0000${topic}\u0000${partition}`;
    let m = this.partitions.get(key);
    if (m === undefined) {
      m = {
        target,
        topic,
        partition,
        recordCount: 0,
        byteCount: 0,
        recordAgeMs: stat(),
        replicationLatencyMs: stat(),
      };
      this.partitions.set(key, m);
    }
    return m;
  }

  /** A record read upstream and handed to the producer (Kafka counts it in poll()). */
  recordPolled(m: PartitionMetrics, bytes: number, timestampMs: number, nowMs: number): void {
    m.recordCount++;
    m.byteCount += bytes;
    observe(m.recordAgeMs, Math.max(0, nowMs - timestampMs));
  }

  /** A record acknowledged downstream (at `nowMs`): its latency from its timestamp, as Kafka measures it. */
  recordCommitted(m: PartitionMetrics, timestampMs: number, nowMs: number): void {
    observe(m.replicationLatencyMs, Math.max(0, nowMs - timestampMs));
  }

  all(): PartitionMetrics[] {
    return [...this.partitions.values()];
  }

  /** Prometheus text, names as the JMX exporter gives Kafka's: kafka_connect_mirror_mirrorsourceconnector_*. */
  prometheus(): string {
    const lines: string[] = [];
    const base = 'kafka_connect_mirror_mirrorsourceconnector_';
    const put = (name: string, type: string, pick: (m: PartitionMetrics) => number) => {
      lines.push(`# TYPE ${base}${name} ${type}`);
      for (const m of this.partitions.values()) {
        const labels = `target="${m.target}",topic="${m.topic}",partition="${m.partition}"`;
        lines.push(`${base}${name}{${labels}} ${pick(m)}`);
      }
    };
    put('record_count', 'counter', (m) => m.recordCount);
    put('byte_count', 'counter', (m) => m.byteCount);
    for (const [name, pick] of [
      ['record_age_ms', (m: PartitionMetrics) => m.recordAgeMs],
      ['replication_latency_ms', (m: PartitionMetrics) => m.replicationLatencyMs],
    ] as const) {
      put(`${name}_min`, 'gauge', (m) => (pick(m).count === 0 ? 0 : pick(m).min));
      put(`${name}_max`, 'gauge', (m) => pick(m).max);
      put(`${name}_avg`, 'gauge', (m) => (pick(m).count === 0 ? 0 : pick(m).sum / pick(m).count));
    }
    return `${lines.join('\n')}\n`;
  }
}

export const mirrorMetrics = new MirrorMetricsRegistry();
