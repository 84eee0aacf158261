// The live charts' data: a sampler that, while a page is watching, takes one point every interval and keeps the
// last POINTS_MAX. Throughput and request latency come from the brokers' Prometheus endpoints when --metrics-url
// names them (Kafka's JMX-exporter names, src/metrics/README.md), else throughput in is the growth of the log end
// offsets and throughput out the growth of the groups' committed offsets. Lag is always committed offsets against
// log end offsets read from the cluster: the brokers' own lag metric covers only the partitions that the group's
// coordinator also leads.
//
// Lifecycle: the first call of series() starts the timer; it stops once nobody asked for IDLE_MS, so an unwatched
// console puts no load on the cluster. One sample at a time: a tick that finds the previous still running skips.

import type { Admin } from '../client/admin.js';
import { withDeadline } from './api-error.js';
import type { MetricsPoint, MetricsSeries } from './api-types.js';
import { parsePrometheusText, type Sample, sumOf } from './prometheus-text.js';

const POINTS_MAX = 360;
const IDLE_MS = 60_000;
/** A scrape of one broker's endpoint; a dead one must not hold the sample. */
const SCRAPE_TIMEOUT_MS = 3_000;
/** A metrics page above this is not a broker's endpoint (Brook's is tens of KiB). */
const SCRAPE_BYTES_MAX = 16 * 1024 * 1024;

interface Totals {
  timeMs: number;
  messagesIn: number | null;
  bytesIn: number | null;
  bytesOut: number | null;
  consumed: number | null;
  latency: Record<'Produce' | 'Fetch', { sum: number; count: number } | null>;
}

export interface LiveMetricsOptions {
  admin: Admin;
  metricsUrls: string[];
  intervalMs: number;
  /** Bound of one sample's calls to the cluster. */
  timeoutMs: number;
}

export class LiveMetrics {
  private readonly points: MetricsPoint[] = [];
  private previous: Totals | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private lastWantedMs = 0;
  private error: string | null = null;
  /** Why the last scrape of the brokers' endpoints failed, if it did. */
  private scrapeError: string | null = null;
  private source: MetricsSeries['source'];

  constructor(private readonly o: LiveMetricsOptions) {
    this.source = o.metricsUrls.length > 0 ? 'prometheus' : 'offsets';
  }

  series(): MetricsSeries {
    this.lastWantedMs = Date.now();
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.o.intervalMs);
      this.timer.unref();
      this.tick();
    }
    return {
      source: this.source,
      intervalMs: this.o.intervalMs,
      points: [...this.points],
      error: this.error ?? this.scrapeError,
    };
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private tick(): void {
    if (Date.now() - this.lastWantedMs > IDLE_MS) {
      this.stop();
      this.previous = null; // rates across a pause would average over it
      return;
    }
    if (this.running) return;
    this.running = true;
    withDeadline(this.sample(), this.o.timeoutMs, 'metrics sample')
      .then(
        (point) => {
          this.error = null;
          if (point !== null) {
            this.points.push(point);
            if (this.points.length > POINTS_MAX) this.points.shift();
          }
        },
        (error: unknown) => {
          this.error = error instanceof Error ? error.message : String(error);
        },
      )
      .finally(() => {
        this.running = false;
      });
  }

  /** One point, or null for the first sample (rates need two). */
  private async sample(): Promise<MetricsPoint | null> {
    const offsets = await this.offsetTotals();
    // An endpoint that fails blanks only the metrics' lines for this point; lag and commits still come.
    let scraped: Sample[] | null = null;
    this.scrapeError = null;
    if (this.o.metricsUrls.length > 0) {
      scraped = await this.scrape().catch((error: unknown) => {
        this.scrapeError = `metrics: ${error instanceof Error ? error.message : String(error)}`;
        return null;
      });
    }
    const now: Totals = {
      timeMs: Date.now(),
      messagesIn: scraped
        ? sumOf(scraped, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: '' })
        : this.o.metricsUrls.length > 0
          ? null
          : offsets.logEnd,
      bytesIn: scraped
        ? sumOf(scraped, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: '' })
        : null,
      bytesOut: scraped
        ? sumOf(scraped, 'kafka_server_brokertopicmetrics_bytesout_total', { topic: '' })
        : null,
      consumed: offsets.committed,
      latency: {
        Produce: scraped ? latencyTotals(scraped, 'Produce') : null,
        Fetch: scraped ? latencyTotals(scraped, 'Fetch') : null,
      },
    };
    const before = this.previous;
    this.previous = now;
    if (before === null) return null;
    const seconds = (now.timeMs - before.timeMs) / 1000;
    const rate = (a: number | null, b: number | null): number | null =>
      a === null || b === null || seconds <= 0 ? null : Math.max(0, (a - b) / seconds);
    const meanMs = (api: 'Produce' | 'Fetch'): number | null => {
      const a = now.latency[api];
      const b = before.latency[api];
      if (a === null || b === null || a.count <= b.count) return null;
      return (a.sum - b.sum) / (a.count - b.count);
    };
    return {
      timeMs: now.timeMs,
      messagesInPerSec: rate(now.messagesIn, before.messagesIn),
      bytesInPerSec: rate(now.bytesIn, before.bytesIn),
      bytesOutPerSec: rate(now.bytesOut, before.bytesOut),
      messagesConsumedPerSec: rate(now.consumed, before.consumed),
      produceLatencyMs: meanMs('Produce'),
      fetchLatencyMs: meanMs('Fetch'),
      probeLatencyMs: offsets.probeMs,
      lag: offsets.lag,
    };
  }

  /** Sum of log end offsets of user topics, sum of committed offsets, lag per group, and the probe's time. */
  private async offsetTotals(): Promise<{
    logEnd: number;
    committed: number;
    lag: Record<string, number>;
    probeMs: number;
  }> {
    const { admin } = this.o;
    const topics = (await admin.describeTopics()).filter((t) => t.error === null && !t.isInternal);
    const tps = topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition })));
    const started = performance.now();
    const ends =
      tps.length === 0 ? [] : await admin.listOffsets(tps.map((tp) => ({ ...tp, spec: 'latest' as const })));
    const probeMs = performance.now() - started;
    const endOf = new Map(ends.map((e) => [`${e.topic}\u0000${e.partition}`, e.offset]));
    let logEnd = 0;
    for (const e of ends) logEnd += Math.max(0, e.offset);
    let committed = 0;
    const lag: Record<string, number> = {};
    for (const g of await admin.listGroups()) {
      if (g.protocolType !== 'consumer' && g.protocolType !== '') continue;
      let groupLag = 0;
      for (const c of await admin.listConsumerGroupOffsets(g.groupId)) {
        const end = endOf.get(`${c.topic}\u0000${c.partition}`);
        if (c.offset < 0 || end === undefined) continue;
        committed += c.offset;
        groupLag += Math.max(0, end - c.offset);
      }
      lag[g.groupId] = groupLag;
    }
    return { logEnd, committed, lag, probeMs };
  }

  /** Every configured endpoint's samples, concatenated (counters are summed over brokers by sumOf). */
  private async scrape(): Promise<Sample[]> {
    const texts = await Promise.all(
      this.o.metricsUrls.map(async (url) => {
        const response = await fetch(url, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
        if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
        const length = Number(response.headers.get('content-length') ?? 0);
        if (length > SCRAPE_BYTES_MAX) throw new Error(`${url}: ${length} bytes is more than a metrics page`);
        return response.text();
      }),
    );
    return texts.flatMap((t) => parsePrometheusText(t));
  }
}

function latencyTotals(samples: Sample[], request: string): { sum: number; count: number } | null {
  const sum = sumOf(samples, 'kafka_network_requestmetrics_totaltimems_sum', { request });
  const count = sumOf(samples, 'kafka_network_requestmetrics_totaltimems_count', { request });
  return sum === null || count === null ? null : { sum, count };
}
