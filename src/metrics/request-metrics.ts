// Kafka's RequestMetrics per request type: how many requests, and where their time went (queue, local, remote,
// response queue, response send, total), as Prometheus histograms named as the JMX exporter names Kafka's
// (kafka_network_requestmetrics_totaltimems{request="Produce"}: its _count is the exporter's _count).
// As Kafka's RequestChannel does, a Fetch counts twice: under "Fetch", and under "FetchConsumer" or
// "FetchFollower" by who sent it (a replica id of 0 or more is a follower).
//
// The network layer reports each request with numbers only (RequestObserver); this module adds them to
// preallocated bucket arrays indexed by API key, so timing allocates nothing per request. prom-client sees the
// arrays at scrape time through a Histogram whose export reads them (it never observes values itself: its own
// observe() builds a label key string per call).

import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestObserver } from '../network/request.js';
import { ApiKey, findApi } from '../protocol/registry.js';

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

/** Kafka's RequestMetrics.CONSUMER_FETCH_METRIC_NAME and FOLLOW_FETCH_METRIC_NAME. */
export const FETCH_CONSUMER = 'FetchConsumer';
export const FETCH_FOLLOWER = 'FetchFollower';

/** Adds one request's six stage times (RequestObserver's order) to `t`. */
function observeAll(
  t: RequestTimes,
  q: number,
  l: number,
  r: number,
  rq: number,
  s: number,
  total: number,
): void {
  const stages = t.stages;
  stages[0]!.observe(q);
  stages[1]!.observe(l);
  stages[2]!.observe(r);
  stages[3]!.observe(rq);
  stages[4]!.observe(s);
  stages[5]!.observe(total);
}

export class RequestMetrics implements RequestObserver {
  /** Indexed by API key. */
  private readonly byApiKey: (RequestTimes | undefined)[] = [];
  /** Fetches by sender, made at the first of each. */
  private fetchConsumer: RequestTimes | undefined;
  private fetchFollower: RequestTimes | undefined;

  requestDone(
    apiKey: number,
    queueMs: number,
    localMs: number,
    remoteMs: number,
    responseQueueMs: number,
    sendMs: number,
    totalMs: number,
    followerFetch = false,
  ): void {
    // Bare SASL tokens (no header, key -1) are not requests of any type.
    if (apiKey < 0) return;
    let t = this.byApiKey[apiKey];
    if (t === undefined) {
      t = new RequestTimes(requestName(apiKey));
      this.byApiKey[apiKey] = t;
    }
    observeAll(t, queueMs, localMs, remoteMs, responseQueueMs, sendMs, totalMs);
    if (apiKey !== ApiKey.FETCH) return;
    let bySender: RequestTimes;
    if (followerFetch) bySender = this.fetchFollower ??= new RequestTimes(FETCH_FOLLOWER);
    else bySender = this.fetchConsumer ??= new RequestTimes(FETCH_CONSUMER);
    observeAll(bySender, queueMs, localMs, remoteMs, responseQueueMs, sendMs, totalMs);
  }

  /** Registers the request counter and the six histograms. */
  register(registry: Registry): void {
    const times = (): readonly (RequestTimes | undefined)[] => [
      ...this.byApiKey,
      this.fetchConsumer,
      this.fetchFollower,
    ];
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
