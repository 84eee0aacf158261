// The Grafana dashboard and the Prometheus alert rules in config/, judged by Prometheus itself (Debian's
// prometheus package, .ci/install): promtool accepts the rules file, and its rule unit tests show each classic
// Kafka alert firing on the series that should fire it and staying quiet on healthy ones; a real Prometheus
// server scrapes a real broker's brook.metrics.listener, loads the rules with no evaluation error, and answers
// every expression of the dashboard (Grafana's variables filled in) without a query error, with the values
// the broker's state implies for the cluster-health panels.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { type BrokerProcess, run } from '../helpers/broker-process.js';
import { sleep } from '../helpers/wait.js';
import { createTopic, produceBatch, WireClient } from '../helpers/wire-client.js';
import { freePort } from '../helpers/zookeeper.js';
import { httpRequest, startMeteredBroker } from './scrape.js';

const REPO_ROOT = resolve(import.meta.dirname, '../../..');
const RULES = join(REPO_ROOT, 'config/prometheus/brook-alerts.yml');
const DASHBOARD = join(REPO_ROOT, 'config/grafana/brook-dashboard.json');
const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';

test('promtool accepts the alert rules', async () => {
  const r = await run(PROMTOOL, ['check', 'rules', RULES], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS: 9 rules found/);
});

// Synthetic series, one minute apart, for promtool's rule unit tests: each classic alert fires once its
// condition has held for its `for`, and not before; a healthy cluster fires none.
const RULE_TESTS = `
rule_files: [${JSON.stringify(RULES)}]
evaluation_interval: 1m
tests:
  - name: a follower down leaves a partition under-replicated, then below min ISR
    interval: 1m
    input_series:
      - series: 'kafka_server_replicamanager_underreplicatedpartitions{job="brook",instance="b0"}'
        values: '0 0 1x20'
      - series: 'kafka_server_replicamanager_underreplicatedpartitions{job="brook",instance="b1"}'
        values: '0x22'
      - series: 'kafka_server_replicamanager_underminisrpartitioncount{job="brook",instance="b0"}'
        values: '0x10 2x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: KafkaUnderReplicatedPartitions
        exp_alerts: []
      - eval_time: 8m
        alertname: KafkaUnderReplicatedPartitions
        exp_alerts:
          - exp_labels: { severity: warning }
            exp_annotations:
              summary: '1 partitions have fewer in-sync replicas than replicas'
              description: 'A follower is down or behind. Check brokers that are not ready (/readyz) and their fetcher lag.'
      - eval_time: 10m
        alertname: KafkaUnderMinIsrPartitions
        exp_alerts: []
      - eval_time: 13m
        alertname: KafkaUnderMinIsrPartitions
        exp_alerts:
          - exp_labels: { severity: critical }
            exp_annotations:
              summary: '2 partitions are below min.insync.replicas'
              description: 'Producers with acks=all get NOT_ENOUGH_REPLICAS for these partitions.'
  - name: offline partitions and no active controller
    interval: 1m
    input_series:
      - series: 'kafka_controller_kafkacontroller_offlinepartitionscount{job="brook",instance="b0"}'
        values: '0 0 3x10'
      - series: 'kafka_controller_kafkacontroller_activecontrollercount{job="brook",instance="b0"}'
        values: '1 1 0x10'
      - series: 'kafka_controller_kafkacontroller_activecontrollercount{job="brook",instance="b1"}'
        values: '0x12'
    alert_rule_test:
      - eval_time: 1m
        alertname: KafkaOfflinePartitions
        exp_alerts: []
      - eval_time: 1m
        alertname: KafkaNoActiveController
        exp_alerts: []
      - eval_time: 5m
        alertname: KafkaOfflinePartitions
        exp_alerts:
          - exp_labels: { severity: critical }
            exp_annotations:
              summary: '3 partitions have no live leader'
              description: 'Neither produce nor fetch works for them until a replica comes back or is elected.'
      - eval_time: 5m
        alertname: KafkaNoActiveController
        exp_alerts:
          - exp_labels: { severity: critical }
            exp_annotations:
              summary: '0 active controllers (exactly 1 expected)'
              description: 'No controller: leader elections and topic changes stop. More than one: a split brain to look into.'
  - name: a consumer group whose lag grows, and one that keeps up
    interval: 1m
    input_series:
      - series: 'kafka_consumergroup_lag{job="brook",instance="b0",consumergroup="slow",topic="orders",partition="0"}'
        values: '0+100x60'
      - series: 'kafka_consumergroup_lag{job="brook",instance="b0",consumergroup="fast",topic="orders",partition="0"}'
        values: '5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5 0 5'
    alert_rule_test:
      - eval_time: 10m
        alertname: KafkaConsumerLagGrowing
        exp_alerts: []
      - eval_time: 20m
        alertname: KafkaConsumerLagGrowing
        exp_alerts:
          - exp_labels: { severity: warning, consumergroup: slow, topic: orders }
            exp_annotations:
              summary: 'Consumer group slow falls further behind on orders'
              description: 'Its committed offsets have trailed the high watermark by more and more for 15 minutes.'
  - name: a healthy cluster fires nothing
    interval: 1m
    input_series:
      - series: 'up{job="brook",instance="b0"}'
        values: '1x40'
      - series: 'kafka_controller_kafkacontroller_activecontrollercount{job="brook",instance="b0"}'
        values: '1x40'
      - series: 'kafka_controller_kafkacontroller_offlinepartitionscount{job="brook",instance="b0"}'
        values: '0x40'
      - series: 'kafka_server_replicamanager_underreplicatedpartitions{job="brook",instance="b0"}'
        values: '0x40'
      - series: 'kafka_server_replicamanager_underminisrpartitioncount{job="brook",instance="b0"}'
        values: '0x40'
      - series: 'kafka_server_replicamanager_isrshrinks_total{job="brook",instance="b0"}'
        values: '4x40'
      - series: 'kafka_consumergroup_lag{job="brook",instance="b0",consumergroup="g",topic="t",partition="0"}'
        values: '0x40'
    alert_rule_test:
${[
  'KafkaUnderReplicatedPartitions',
  'KafkaUnderMinIsrPartitions',
  'KafkaOfflinePartitions',
  'KafkaNoActiveController',
  'KafkaIsrShrinking',
  'KafkaConsumerLagGrowing',
  'BrookBrokerDown',
]
  .map((name) => `      - eval_time: 40m\n        alertname: ${name}\n        exp_alerts: []`)
  .join('\n')}
`;

test('promtool rule unit tests: each classic alert fires on its condition after its wait, and only then', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'brook-promtool-'));
  try {
    const file = join(dir, 'brook-alerts.test.yml');
    writeFileSync(file, RULE_TESTS);
    const r = await run(PROMTOOL, ['test', 'rules', file], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface PromAnswer {
  status: string;
  error?: string;
  data: { result: { metric: Record<string, string>; value: [number, string] }[] };
}

/** One instant query against the Prometheus server's HTTP API. */
async function query(port: number, expr: string): Promise<PromAnswer> {
  const answer = await httpRequest(port, `/api/v1/query?query=${encodeURIComponent(expr)}`);
  return JSON.parse(answer.body) as PromAnswer;
}

/** The dashboard's expressions with Grafana's variables replaced as Grafana would for the job "brook". */
function dashboardExprs(): { panel: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  return dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      panel: p.title,
      expr: t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'brook'),
    })),
  );
}

describe('a Prometheus server scraping a broker', () => {
  let broker: BrokerProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let promPort = 0;
  let dir = '';

  before(async () => {
    const metered = await startMeteredBroker({ 'num.partitions': 1 });
    broker = metered.broker;
    const { metricsPort } = metered;
    const client = await WireClient.connect(broker.host, broker.port);
    try {
      await createTopic(client, 'scraped', { numPartitions: 1, replicationFactor: 1 });
      await produceBatch(client, 'scraped', buildBatch([{ value: 'a' }, { value: 'b' }]), 1);
    } finally {
      client.close();
    }
    dir = mkdtempSync(join(tmpdir(), 'brook-prometheus-'));
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES)}]`,
        'scrape_configs:',
        '  - job_name: brook',
        `    static_configs: [{ targets: ["127.0.0.1:${metricsPort}"] }]`,
        '',
      ].join('\n'),
    );
    promPort = await freePort();
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr!.on('data', (d: Buffer) => {
      prometheusLog += d.toString();
    });
  });
  after(async () => {
    if (prometheus && prometheus.exitCode === null && prometheus.signalCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      const killer = setTimeout(() => prometheus!.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Polls until `check` passes (it throws while not): Prometheus needs a few scrapes for rates. */
  async function eventually(check: () => Promise<void>, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await check();
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`${(err as Error).message}\nprometheus log:\n${prometheusLog}`);
        await sleep(500);
      }
    }
  }

  test('scrapes the broker and evaluates every alert rule without an error', {
    timeout: 120_000,
  }, async () => {
    await eventually(async () => {
      const targets = JSON.parse((await httpRequest(promPort, '/api/v1/targets')).body) as {
        data: { activeTargets: { health: string; lastError: string }[] };
      };
      assert.equal(targets.data.activeTargets.length, 1);
      assert.equal(targets.data.activeTargets[0]!.health, 'up', targets.data.activeTargets[0]!.lastError);
    });
    await eventually(async () => {
      const rules = JSON.parse((await httpRequest(promPort, '/api/v1/rules')).body) as {
        data: { groups: { rules: { name: string; health: string; lastError?: string; state: string }[] }[] };
      };
      const all = rules.data.groups.flatMap((g) => g.rules);
      assert.equal(all.length, 9);
      for (const rule of all) {
        assert.equal(rule.health, 'ok', `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`);
        assert.equal(rule.state, 'inactive', `${rule.name} is ${rule.state} on a healthy broker`);
      }
    });
  });

  test('answers every dashboard expression; the health panels show a healthy broker', {
    timeout: 120_000,
  }, async () => {
    const exprs = dashboardExprs();
    assert.ok(exprs.length >= 30, `${exprs.length} expressions`);
    // Rates need two scrapes inside their window: wait until the throughput panel has its topic.
    await eventually(async () => {
      const answer = await query(promPort, exprs.find((e) => e.panel === 'Messages in / s by topic')!.expr);
      assert.equal(answer.status, 'success', answer.error);
      assert.deepEqual(
        answer.data.result.map((r) => r.metric.topic),
        ['scraped'],
      );
    });
    let withData = 0;
    for (const { panel, expr } of exprs) {
      const answer = await query(promPort, expr);
      assert.equal(answer.status, 'success', `${panel}: ${expr}: ${answer.error}`);
      if (answer.data.result.length > 0) withData++;
    }
    // Lag, follower lag, under-replicated partitions and transactions are empty on an idle single broker.
    assert.ok(withData >= exprs.length - 8, `${withData} of ${exprs.length} expressions have data`);
    const value = async (panel: string): Promise<number> => {
      const answer = await query(promPort, exprs.find((e) => e.panel === panel)!.expr);
      assert.equal(answer.data.result.length, 1, panel);
      return Number(answer.data.result[0]!.value[1]);
    };
    assert.equal(await value('Active controllers'), 1);
    assert.equal(await value('Offline partitions'), 0);
    assert.equal(await value('Under-replicated partitions'), 0);
    assert.equal(await value('Under min ISR'), 0);
  });
});
