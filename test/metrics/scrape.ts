// Test helpers for the metrics endpoint: a broker process serving its metrics, HTTP GETs to its metrics listener
// and a small parser of the Prometheus text format into samples keyed by name and labels.

import http from 'node:http';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { freePort } from '../helpers/zookeeper.js';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One HTTP request to 127.0.0.1:port; answers whatever status comes back. */
export function httpRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

export class Samples {
  constructor(
    readonly text: string,
    private readonly byKey: ReadonlyMap<string, number>,
    /** Metric family names with a # TYPE line. */
    readonly families: ReadonlySet<string>,
  ) {}

  /** The sample with exactly these labels; undefined when absent. */
  get(name: string, labels: Record<string, string | number> = {}): number | undefined {
    return this.byKey.get(sampleKey(name, labels));
  }

  /** Like get(), but a missing sample fails the test with the names that are there. */
  value(name: string, labels: Record<string, string | number> = {}): number {
    const v = this.get(name, labels);
    if (v === undefined) throw new Error(`no sample ${sampleKey(name, labels)} in the scrape`);
    return v;
  }

  /** Every sample name in the scrape (bucket, sum and count names included). */
  names(): Set<string> {
    const names = new Set<string>();
    for (const key of this.byKey.keys()) names.add(key.replace(/\{.*$/, ''));
    return names;
  }
}

function sampleKey(name: string, labels: Record<string, string | number>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${String(labels[k])}`);
  return parts.length === 0 ? name : `${name}{${parts.join(',')}}`;
}

/** Parses the text format (label values without escaped quotes or commas, which is all Brook emits in tests). */
export function parseSamples(text: string): Samples {
  const byKey = new Map<string, number>();
  const families = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      families.add(line.split(' ')[2]!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').split(',').filter(Boolean)) {
      const at = pair.indexOf('=');
      labels[pair.slice(0, at)] = JSON.parse(pair.slice(at + 1)) as string;
    }
    byKey.set(sampleKey(match[1]!, labels), Number(match[3]));
  }
  return new Samples(text, byKey, families);
}

export async function scrape(port: number): Promise<Samples> {
  const answer = await httpRequest(port, '/metrics');
  if (answer.status !== 200) throw new Error(`/metrics answered ${answer.status}: ${answer.body}`);
  return parseSamples(answer.body);
}

/** A broker process with its metrics listener on a free port (brook.metrics.listener), and `overrides`. */
export async function startMeteredBroker(
  overrides: Record<string, string | number | boolean>,
): Promise<{ broker: BrokerProcess; metricsPort: number }> {
  const metricsPort = await freePort();
  const broker = await startBroker({
    overrides: { 'brook.metrics.listener': `http://127.0.0.1:${metricsPort}`, ...overrides },
  });
  return { broker, metricsPort };
}
