// The tools people expect from Kafka's bin directory, run as `bin/brook` against a broker process: the option
// shapes Kafka's scripts take and the output lines they print, so scripts written for Kafka parse Brook's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useToolBroker } from '../helpers/tool-broker.js';

const tools = useToolBroker('brook-parity-');
const brook = tools.brook;
const bs = tools.bootstrapArgs;

test('producer-perf-test takes several key=value pairs after one --producer-props', async () => {
  let r = await brook([
    'producer-perf-test',
    '--topic',
    'parity-perf',
    '--num-records',
    '50',
    '--record-size',
    '10',
    '--throughput',
    '-1',
    '--producer-props',
    'acks=1',
    `bootstrap.servers=${tools.broker.bootstrap}`,
    'linger.ms=1',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^50 records sent, /m);
  r = await brook([
    'producer-perf-test',
    ...bs(),
    '--topic',
    'parity-perf',
    '--num-records',
    '5',
    '--record-size',
    '10',
    '--throughput',
    '-1',
    '--producer-props',
    'acks=1',
    'nonsense',
  ]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^Invalid property: nonsense\n/);
});

test('broker-api-versions prints one Kafka-shaped block per broker', async () => {
  const r = await brook(['broker-api-versions', ...bs()]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, /^127\.0\.0\.1:\d+ \(id: \d+ rack: null\) -> \($/);
  assert.match(lines[1]!, /^\tProduce\(0\): \d+ to \d+ \[usable: \d+\],$/);
  assert.ok(lines.includes('\tApiVersions(18): 0 to 4 [usable: 4],'), r.stdout);
  assert.match(r.stdout, /\tFetch\(1\): \d+ to \d+ \[usable: 12\],\n/);
  const last = lines.indexOf(')');
  assert.ok(last > 10, 'the block closes with a lone parenthesis');
  assert.doesNotMatch(lines[last - 1]!, /,$/);
  const bad = await brook(['broker-api-versions', ...bs(), '--what']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^--what is not a recognized option\n/);
});

test('log-dirs --describe prints Kafka lines and JSON with partition sizes', async () => {
  const p = await brook(['console-producer', ...bs(), '--topic', 'parity-dirs'], 'one\ntwo\nthree\n');
  assert.equal(p.code, 0, p.stderr);
  const id = tools.broker.brokerId;
  let r = await brook(['log-dirs', ...bs(), '--describe', '--topic-list', 'parity-dirs']);
  assert.equal(r.code, 0, r.stderr);
  const [first, second, json, rest] = r.stdout.split('\n');
  assert.equal(first, 'Querying brokers for log directories information');
  assert.equal(second, `Received log directory information from brokers ${id}`);
  assert.equal(rest, '');
  const report = JSON.parse(json!);
  assert.equal(report.version, 1);
  assert.equal(report.brokers[0].broker, id);
  const dir = report.brokers[0].logDirs[0];
  assert.equal(dir.error, null);
  assert.equal(typeof dir.logDir, 'string');
  assert.equal(dir.partitions.length, 1);
  assert.equal(dir.partitions[0].partition, 'parity-dirs-0');
  assert.ok(dir.partitions[0].size > 0);
  assert.deepEqual(Object.keys(dir.partitions[0]), ['partition', 'size', 'offsetLag', 'isFuture']);
  r = await brook(['log-dirs', ...bs(), '--describe', '--broker-list', `${id},77`]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `ERROR: The given brokers do not exist from --broker-list: 77. Current existent brokers: ${id}\n`,
  );
  r = await brook(['log-dirs', ...bs()]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^Missing required argument "\[describe\]"\n/);
});
