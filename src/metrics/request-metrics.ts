// Kafka's RequestMetrics per request type: how many requests, and where their time went (queue, local, remote,
// response queue, response send, total), as Prometheus histograms named as the JMX exporter names Kafka's
// (kafka_network_requestmetrics_totaltimems{request="Produce"}: its _count is the exporter's _count).
//
// The network layer reports each request with numbers only (RequestObserver); this module adds them to
// preallocated bucket arrays indexed by API key, so timing allocates nothing per request. prom-client sees the
// arrays at scrape time through a Histogram whose export reads them (it never observes values itself: its own
// observe() builds a label key string per call).

import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestObserver } from '../network/request.js';
import { findApi } from '../protocol/registry.js';

/** Upper bounds in milliseconds: from sub-millisecond local work to request.timeout.ms-long waits. */
export const REQUEST_TIME_BUCKETS_MS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
];

/** The stages of RequestObserver, in its argument order, with Kafka's metric names. */
const STAGES = [
  ['requestqueuetimems', 'RequestQueueTimeMs: from the read completing the request to its handler'],
  ['localtimems', 'LocalTimeMs: in the handler until the response is ready or the request starts waiting'],
  ['remotetimems', 'RemoteTimeMs: waiting for other brokers or data (acks=all, long-poll fetch)'],
  ['responsequeuetimems', 'ResponseQueueTimeMs: ready, waiting for earlier responses on its connection'],
  ['responsesendtimems', 'ResponseSendTimeMs: from writing the response until the socket took it'],
  ['totaltimems', 'TotalTimeMs: from the read to the socket'],
] as const;

/** One histogram's counts: per bucket (not cumulative; the last slot is above every bound), sum and count. */
class Buckets {
  readonly counts = new Float64Array(REQUEST_TIME_BUCKETS_MS.length + 1);
  sum = 0;
  count = 0;

  observe(value: number): void {
    const bounds = REQUEST_TIME_BUCKETS_MS;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** What one API key has seen: one Buckets per stage, made at its first request. */
class RequestTimes {
  readonly stages: Buckets[] = STAGES.map(() => new Buckets());
  constructor(readonly request: string) {}
}

type ExportedValues = Awaited<ReturnType<Histogram['get']>>['values'];

/** A prom-client Histogram that exports one stage of every API key's arrays instead of values it observed. */
class StageHistogram extends Histogram<'request'> {
  constructor(
    private readonly metricName: string,
    private readonly metricHelp: string,
    private readonly stage: number,
    private readonly times: () => readonly (RequestTimes | undefined)[],
  ) {
    super({
      name: metricName,
      help: metricHelp,
      labelNames: ['request'],
      buckets: [...REQUEST_TIME_BUCKETS_MS],
      registers: [],
    });
  }

  override async get(): Promise<Awaited<ReturnType<Histogram['get']>>> {
    return this.exported();
  }

  /** prom-client's registry prefers this to get() when formatting the text answer. */
  async getForPromString(): Promise<Awaited<ReturnType<Histogram['get']>>> {
    return this.exported();
  }

  private exported(): Awaited<ReturnType<Histogram['get']>> {
    const values: ExportedValues = [];
    const name = this.metricName;
    const bucket = `${name}_bucket`;
    for (const t of this.times()) {
      if (t === undefined) continue;
      const b = t.stages[this.stage]!;
      let cumulative = 0;
      REQUEST_TIME_BUCKETS_MS.forEach((le, i) => {
        cumulative += b.counts[i]!;
        values.push({ labels: { request: t.request, le }, value: cumulative, metricName: bucket } as never);
      });
      values.push({
        labels: { request: t.request, le: '+Inf' },
        value: b.count,
        metricName: bucket,
      } as never);
      values.push({ labels: { request: t.request }, value: b.sum, metricName: `${name}_sum` } as never);
      values.push({ labels: { request: t.request }, value: b.count, metricName: `${name}_count` } as never);
    }
    return {
      name,
      help: this.metricHelp,
      type: 'histogram' as never,
      values,
      aggregator: 'sum',
      collect: () => {},
    };
  }
}

export class RequestMetrics implements RequestObserver {
  /** Indexed by API key. */
  private readonly byApiKey: (RequestTimes | undefined)[] = [];

  requestDone(
    apiKey: number,
    queueMs: number,
    localMs: number,
    remoteMs: number,
    responseQueueMs: number,
    sendMs: number,
    totalMs: number,
  ): void {
    // Bare SASL tokens (no header, key -1) are not requests of any type.
    if (apiKey < 0) return;
    let t = this.byApiKey[apiKey];
    if (t === undefined) {
      t = new RequestTimes(requestName(apiKey));
      this.byApiKey[apiKey] = t;
    }
    const s = t.stages;
    s[0]!.observe(queueMs);
    s[1]!.observe(localMs);
    s[2]!.observe(remoteMs);
    s[3]!.observe(responseQueueMs);
    s[4]!.observe(sendMs);
    s[5]!.observe(totalMs);
  }

  /** Registers the request counter and the six histograms. */
  register(registry: Registry): void {
    const times = (): readonly (RequestTimes | undefined)[] => this.byApiKey;
    STAGES.forEach(([name, help], stage) => {
      registry.registerMetric(new StageHistogram(`kafka_network_requestmetrics_${name}`, help, stage, times));
    });
    registry.registerMetric(
      new Counter({
        name: 'kafka_network_requestmetrics_requests_total',
        help: 'RequestsPerSec: requests answered (or, without a response, done), by request type',
        labelNames: ['request'],
        registers: [],
        collect() {
          this.reset();
          for (const t of times()) if (t !== undefined) this.inc({ request: t.request }, t.stages[5]!.count);
        },
      }),
    );
  }
}

/** Kafka's request label is the API's name (Produce, Fetch, ApiVersions, ...). */
function requestName(apiKey: number): string {
  return findApi(apiKey)?.name ?? `ApiKey${apiKey}`;
}
