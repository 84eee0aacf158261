// `--metrics-compare`: each cell runs a second time on a fresh broker with `brook.metrics.listener` set, while
// this process scrapes /metrics once a second (Prometheus scrapes every 15 s by default: this is the harder
// case), and the two runs' produce throughput and broker MB per CPU-second are divided, metrics on over off.
// The first run of the pair is the cell's ordinary one (metrics off, unless --broker-override turned them on).
// A last scrape must show the broker counted the records the generator sent, so a run that silently had no
// metrics cannot pass for a cheap one.

import { assert } from '../../src/common/assert.js';
import { freePort } from '../cluster/local-cluster.js';
import { type RatioSummary, ratioOfSummaries } from '../harness/ratio.js';
import { summarize } from '../harness/repeat.js';
import type { ResultWriter } from '../harness/results.js';
import { type CellOptions, type CellResult, type CellSpec, cellName, runCell } from './cell.js';

const SCRAPE_INTERVAL_MS = 1000;

export interface MetricsComparison {
  readonly name: string;
  readonly off: CellResult;
  readonly on: CellResult;
  /** Produce wire MB/s, metrics on over off. */
  readonly throughput: RatioSummary;
  /** Broker wire MB per CPU-second, metrics on over off. */
  readonly cpuEfficiency: RatioSummary;
  readonly scrapes: number;
}

export async function runMetricsOnCell(
  spec: CellSpec,
  off: CellResult,
  options: CellOptions,
  writer: ResultWriter,
): Promise<MetricsComparison> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/metrics`;
  let scrapes = 0;
  let lastBody = '';
  const timer = setInterval(() => {
    fetch(url)
      .then(async (response) => {
        if (response.status !== 200) return;
        lastBody = await response.text();
        scrapes++;
      })
      // Before the broker listens, and after it stopped, there is nothing to scrape.
      .catch(() => {});
  }, SCRAPE_INTERVAL_MS);
  let on: CellResult;
  try {
    on = await runCell(spec, {
      ...options,
      brokerOverrides: { ...options.brokerOverrides, 'brook.metrics.listener': `http://127.0.0.1:${port}` },
    });
  } finally {
    clearInterval(timer);
  }
  const messagesIn = /^kafka_server_brokertopicmetrics_messagesin_total (\S+)$/m.exec(lastBody);
  assert(scrapes > 0 && messagesIn !== null, `no scrape of ${url} succeeded during the cell`);
  assert(Number(messagesIn[1]) > 0, 'the broker with metrics on counted no records');
  const name = cellName(spec);
  const wire = (r: CellResult) => summarize(r.repetitions.map((x) => x.wireMBPerSecond));
  const efficiency = (r: CellResult) => summarize(r.repetitions.map((x) => x.wireMBPerBrokerCpuSecond));
  const comparison: MetricsComparison = {
    name,
    off,
    on,
    throughput: ratioOfSummaries(wire(on), wire(off)),
    cpuEfficiency: ratioOfSummaries(efficiency(on), efficiency(off)),
    scrapes,
  };
  writer.figure(`produce-metrics-on-${name}`, 'MB/s', wire(on), {
    recordsPerSecond: summarize(on.repetitions.map((x) => x.recordsPerSecond)),
    wireMBPerBrokerCpuSecond: efficiency(on),
    scrapes,
    scrapeIntervalMs: SCRAPE_INTERVAL_MS,
    repetitions: on.repetitions,
  });
  writer.write(`metrics-on-over-off-${name}`, {
    throughput: comparison.throughput,
    cpuEfficiency: comparison.cpuEfficiency,
    offWireMBPerSecond: wire(off),
    onWireMBPerSecond: wire(on),
    meaning: 'produce wire MB/s and broker MB per CPU-second with brook.metrics.listener set over unset',
  });
  return comparison;
}
