// The tools people expect from Kafka's bin directory, run as `bin/brook` against a broker process: the option
// shapes Kafka's scripts take and the output lines they print, so scripts written for Kafka parse Brook's.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
import { run } from '../helpers/broker-process.js';
import { useToolBroker } from '../helpers/tool-broker.js';
import { callCoordinator } from '../helpers/txn-session.js';
import { WireClient } from '../helpers/wire-client.js';

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
  assert.equal(r.stderr, '', 'no progress line when stderr is not a terminal');
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
  assert.match(r.stdout, /\tFetch\(1\): 0 to 17 \[usable: 17\],\n/);
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

/** Opens a transaction that writes three records to partition 0 of `topic` and is never ended; answers its producer. */
async function openTransaction(
  transactionalId: string,
  topic: string,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  const brokers = () => [tools.broker];
  const init = await callCoordinator(
    brokers,
    1,
    transactionalId,
    ApiKey.INIT_PRODUCER_ID,
    4,
    {
      transactionalId,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    },
    (r) => r.errorCode,
  );
  assert.equal(init.errorCode, ErrorCode.NONE);
  const { producerId, producerEpoch } = init as { producerId: bigint; producerEpoch: number };
  const added = await callCoordinator(
    brokers,
    1,
    transactionalId,
    ApiKey.ADD_PARTITIONS_TO_TXN,
    3,
    {
      transactions: [],
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: producerId,
      v3AndBelowProducerEpoch: producerEpoch,
      v3AndBelowTopics: [{ name: topic, partitions: [0] }],
    },
    (r) => r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
  );
  assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE);
  const client = await WireClient.connect(tools.broker.host, tools.broker.port);
  try {
    const records = buildBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }], {
      producerId: Number(producerId),
      producerEpoch,
      baseSequence: 0,
      transactional: true,
    });
    const r = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
  } finally {
    client.close();
  }
  return { producerId, producerEpoch };
}

/** The rows of a Kafka pretty-printed table: cells split on the tab that ends each, padding trimmed. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      assert.ok(l.endsWith('\t'), `every cell ends with a tab: ${JSON.stringify(l)}`);
      return l
        .slice(0, -1)
        .split('\t')
        .map((c) => c.trimEnd());
    });
}

test('transactions: list, describe, describe-producers and abort of an open transaction', async () => {
  const created = await brook(['topics', ...bs(), '--create', '--topic', 'parity-txn']);
  assert.equal(created.code, 0, created.stderr);
  const { producerId } = await openTransaction('parity-tid', 'parity-txn');
  const id = String(tools.broker.brokerId);

  let r = await brook(['transactions', ...bs(), 'list']);
  assert.equal(r.code, 0, r.stderr);
  let rows = tableRows(r.stdout);
  assert.deepEqual(rows[0], ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState']);
  assert.deepEqual(
    rows.find((x) => x[0] === 'parity-tid'),
    ['parity-tid', id, String(producerId), 'Ongoing'],
  );

  r = await brook(['transactions', ...bs(), 'describe', '--transactional-id', 'parity-tid']);
  assert.equal(r.code, 0, r.stderr);
  rows = tableRows(r.stdout);
  assert.deepEqual(rows[0], [
    'CoordinatorId',
    'TransactionalId',
    'ProducerId',
    'ProducerEpoch',
    'TransactionState',
    'TransactionTimeoutMs',
    'CurrentTransactionStartTimeMs',
    'TransactionDurationMs',
    'TopicPartitions',
  ]);
  assert.equal(rows[1]![0], id);
  assert.equal(rows[1]![4], 'Ongoing');
  assert.equal(rows[1]![5], '60000');
  assert.match(rows[1]![6]!, /^\d{13}$/);
  assert.equal(rows[1]![8], 'parity-txn-0');

  r = await brook([
    'transactions',
    ...bs(),
    'describe-producers',
    '--topic',
    'parity-txn',
    '--partition',
    '0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  rows = tableRows(r.stdout);
  assert.deepEqual(rows[0], [
    'ProducerId',
    'ProducerEpoch',
    'LatestCoordinatorEpoch',
    'LastSequence',
    'LastTimestamp',
    'CurrentTransactionStartOffset',
  ]);
  assert.equal(rows[1]![0], String(producerId));
  assert.equal(rows[1]![3], '2');
  assert.equal(rows[1]![5], '0');

  // The coordinator lists the partition in the ongoing transaction, so the transaction is not hanging.
  r = await brook([
    'transactions',
    ...bs(),
    'find-hanging',
    '--topic',
    'parity-txn',
    '--max-transaction-timeout',
    '0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(tableRows(r.stdout).length, 1, r.stdout);
  r = await brook([
    'transactions',
    ...bs(),
    'abort',
    '--topic',
    'parity-txn',
    '--partition',
    '0',
    '--start-offset',
    '0',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  r = await brook([
    'transactions',
    ...bs(),
    'describe-producers',
    '--topic',
    'parity-txn',
    '--partition',
    '0',
  ]);
  assert.equal(
    tableRows(r.stdout)[1]![5],
    'None',
    'the ABORT marker closed the transaction on the partition',
  );
  // The marker is in the log, after the three records: the log end offset is 4.
  r = await brook(['get-offsets', ...bs(), '--topic', 'parity-txn']);
  assert.equal(r.stdout, 'parity-txn:0:4\n');

  r = await brook([
    'transactions',
    ...bs(),
    'abort',
    '--topic',
    'parity-txn',
    '--partition',
    '0',
    '--start-offset',
    '0',
  ]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'Could not find any open transactions starting at offset 0 on partition parity-txn-0\n',
  );
  r = await brook(['transactions', ...bs(), 'describe', '--transactional-id', 'parity-nope']);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^Failed to describe transaction state of transactional-id `parity-nope`: TRANSACTIONAL_ID_NOT_FOUND/,
  );
  r = await brook(['transactions', ...bs()]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^a command is required: one of list, describe, describe-producers, abort, find-hanging\n/,
  );
  r = await brook(['transactions', ...bs(), 'abort', '--topic', 'parity-txn', '--partition', '0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^The transaction to abort must be identified either with --start-offset/);
});

/** The JSON events of a verifiable tool's stdout, one a line. */
function events(stdout: string): { name: string; timestamp: number; [field: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

/** Starts `bin/brook args`, waits until `ready` holds for its stdout so far, sends SIGTERM, and answers its outcome. */
function runUntilTerminated(
  args: string[],
  ready: (stdout: string) => boolean,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = resolve(import.meta.dirname, '../../../bin/brook');
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!signalled && ready(stdout)) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(killer);
      done({ code, stdout, stderr });
    });
  });
}

test('verifiable-producer prints Kafka events per ack, and kcat reads what it wrote', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'parity-vp']);
  const r = await brook([
    'verifiable-producer',
    ...bs(),
    '--topic',
    'parity-vp',
    '--max-messages',
    '20',
    '--acks',
    '1',
    '--value-prefix',
    '7',
    '--repeating-keys',
    '3',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const all = events(r.stdout);
  assert.equal(all[0]!.name, 'startup_complete');
  assert.deepEqual(Object.keys(all[0]!), ['timestamp', 'name']);
  const sends = all.filter((e) => e.name === 'producer_send_success');
  assert.equal(sends.length, 20);
  assert.deepEqual(Object.keys(sends[0]!), [
    'timestamp',
    'name',
    'key',
    'value',
    'topic',
    'partition',
    'offset',
  ]);
  assert.deepEqual(
    sends.map((e) => [e.key, e.value, e.topic, e.partition, e.offset]),
    Array.from({ length: 20 }, (_, i) => [String(i % 3), `7.${i}`, 'parity-vp', 0, i]),
  );
  assert.deepEqual(
    all.slice(-2).map((e) => e.name),
    ['shutdown_complete', 'tool_data'],
  );
  const data = all.at(-1)!;
  assert.deepEqual(Object.keys(data), [
    'timestamp',
    'name',
    'sent',
    'acked',
    'target_throughput',
    'avg_throughput',
  ]);
  assert.equal(data.sent, 20);
  assert.equal(data.acked, 20);
  assert.equal(data.target_throughput, -1);
  const kcat = await run(
    'kcat',
    ['-C', '-b', tools.broker.bootstrap, '-t', 'parity-vp', '-e', '-f', '%k=%s@%o\n'],
    {
      timeoutMs: 30_000,
    },
  );
  assert.equal(kcat.code, 0, kcat.stderr);
  assert.deepEqual(
    kcat.stdout.trim().split('\n'),
    Array.from({ length: 20 }, (_, i) => `${i % 3}=7.${i}@${i}`),
  );

  const bad = await brook(['verifiable-producer', ...bs(), '--topic', 'parity-vp', '--acks', '2']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^argument --acks: invalid choice: '2' \(choose from 0, 1, -1\)\n/);
});

test('verifiable-producer reports a record the broker refuses as producer_send_error, as Kafka', async () => {
  // A topic whose max.message.bytes no batch fits: every produce is refused with MESSAGE_TOO_LARGE. (Not
  // min.insync.replicas 2 on this one-replica topic: the minimum is capped at the replicas assigned, as in Kafka
  // 3.7+, and acks=all is taken.)
  const created = await brook([
    'topics',
    ...bs(),
    '--create',
    '--topic',
    'parity-vp-refused',
    '--config',
    'max.message.bytes=10',
  ]);
  assert.equal(created.code, 0, created.stderr);
  const config = join(tools.scratch, 'refused-producer.properties');
  writeFileSync(config, 'delivery.timeout.ms=3000\nrequest.timeout.ms=1000\nlinger.ms=0\n');
  const r = await brook([
    'verifiable-producer',
    ...bs(),
    '--topic',
    'parity-vp-refused',
    '--max-messages',
    '2',
    '--acks',
    '-1',
    '--producer.config',
    config,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const all = events(r.stdout);
  const errors = all.filter((e) => e.name === 'producer_send_error');
  assert.equal(errors.length, 2, r.stdout);
  assert.deepEqual(Object.keys(errors[0]!), [
    'timestamp',
    'name',
    'key',
    'value',
    'topic',
    'exception',
    'message',
  ]);
  assert.deepEqual(errors.map((e) => [e.key, e.value, e.topic]).sort(), [
    [null, '0', 'parity-vp-refused'],
    [null, '1', 'parity-vp-refused'],
  ]);
  assert.match(String(errors[0]!.exception), /^class \S+/);
  assert.ok(String(errors[0]!.message).length > 0);
  assert.equal(all.filter((e) => e.name === 'producer_send_success').length, 0);
  const data = all.at(-1)!;
  assert.equal(data.name, 'tool_data');
  assert.equal(data.sent, 2);
  assert.equal(data.acked, 0);
});

test('verifiable-producer without --max-messages stops on SIGTERM with every outcome reported', async () => {
  const r = await runUntilTerminated(
    ['verifiable-producer', ...bs(), '--topic', 'parity-vp-term', '--throughput', '200'],
    (stdout) => stdout.split('"name":"producer_send_success"').length > 10,
  );
  assert.equal(r.code, 0, r.stderr);
  const all = events(r.stdout);
  const acked = all.filter((e) => e.name === 'producer_send_success').length;
  assert.ok(acked >= 10);
  assert.deepEqual(
    all.slice(-2).map((e) => e.name),
    ['shutdown_complete', 'tool_data'],
  );
  assert.equal(all.at(-1)!.acked, acked);
  assert.equal(all.at(-1)!.sent, acked, 'every record sent was acknowledged before the tool stopped');
  assert.equal(all.at(-1)!.target_throughput, 200);
});

test('verifiable-consumer prints assignment, records, commits and revocation events', async () => {
  // parity-vp holds the 20 records of the producer test.
  const r = await brook([
    'verifiable-consumer',
    ...bs(),
    '--topic',
    'parity-vp',
    '--group-id',
    'parity-vc',
    '--max-messages',
    '20',
    '--session-timeout',
    '10000',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const all = events(r.stdout);
  assert.equal(all[0]!.name, 'startup_complete');
  const assigned = all.find((e) => e.name === 'partitions_assigned')!;
  assert.deepEqual(assigned.partitions, [{ topic: 'parity-vp', partition: 0 }]);
  const consumed = all.filter((e) => e.name === 'records_consumed');
  assert.ok(consumed.length > 0);
  assert.deepEqual(Object.keys(consumed[0]!), ['timestamp', 'name', 'count', 'partitions']);
  const summaries = consumed.flatMap(
    (e) => e.partitions as { count: number; minOffset: number; maxOffset: number }[],
  );
  assert.deepEqual(Object.keys(summaries[0]!), ['topic', 'partition', 'count', 'minOffset', 'maxOffset']);
  assert.equal(
    summaries.reduce((n, s) => n + s.count, 0),
    20,
  );
  assert.equal(summaries[0]!.minOffset, 0);
  assert.equal(summaries.at(-1)!.maxOffset, 19);
  const commits = all.filter((e) => e.name === 'offsets_committed');
  assert.equal(commits.length, consumed.length, 'one commit per poll without --enable-autocommit');
  assert.deepEqual(commits.at(-1)!.offsets, [{ topic: 'parity-vp', partition: 0, offset: 20 }]);
  assert.equal(commits.at(-1)!.success, true);
  assert.deepEqual(
    all.slice(-2).map((e) => e.name),
    ['partitions_revoked', 'shutdown_complete'],
  );
  // The commits reached the group coordinator.
  const described = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'parity-vc']);
  assert.match(described.stdout, /parity-vc\s+parity-vp\s+0\s+20\s+20\s+0/);
});

test('verifiable-consumer without --max-messages leaves its group on SIGTERM', async () => {
  const r = await runUntilTerminated(
    [
      'verifiable-consumer',
      ...bs(),
      '--topic',
      'parity-vp',
      '--group-id',
      'parity-vc-term',
      '--enable-autocommit',
    ],
    (stdout) => stdout.includes('"name":"records_consumed"'),
  );
  assert.equal(r.code, 0, r.stderr);
  const all = events(r.stdout);
  assert.equal(
    all.filter((e) => e.name === 'offsets_committed').length,
    0,
    'no commit events with auto-commit',
  );
  assert.deepEqual(
    all.slice(-2).map((e) => e.name),
    ['partitions_revoked', 'shutdown_complete'],
  );
});

test('producer-perf-test and an offset reset show progress on a terminal only', async () => {
  const bin = resolve(import.meta.dirname, '../../../bin/brook');
  const perf = [bin, 'producer-perf-test', ...bs(), '--topic', 'parity-progress', '--num-records', '3000'];
  perf.push('--record-size', '10', '--throughput', '-1', '--producer-props', 'acks=1');
  // script(1) runs the tool with a pseudo-terminal as its stdin, stdout and stderr, and copies what it wrote.
  const quoted = [process.execPath, ...perf].map((a) => `'${a}'`).join(' ');
  let r = await run('script', ['-qec', quoted, '/dev/null'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /\r\d+\/3000 records acknowledged/);
  assert.match(r.stdout, /3000 records sent, /);

  await brook([
    'consumer-groups',
    ...bs(),
    '--reset-offsets',
    '--group',
    'parity-progress-g',
    '--topic',
    'parity-progress',
    '--to-earliest',
    '--execute',
  ]);
  const reset = [bin, 'consumer-groups', ...bs(), '--reset-offsets', '--group', 'parity-progress-g'];
  reset.push('--topic', 'parity-progress', '--to-latest', '--execute');
  r = await run(
    'script',
    ['-qec', [process.execPath, ...reset].map((a) => `'${a}'`).join(' '), '/dev/null'],
    {
      timeoutMs: 60_000,
    },
  );
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /\rparity-progress-g: reading the offsets of 1 partitions/);
  assert.match(r.stdout, /parity-progress-g\s+parity-progress\s+0\s+3000/);
  const piped = await brook([
    'consumer-groups',
    ...bs(),
    '--reset-offsets',
    '--group',
    'parity-progress-g',
    '--topic',
    'parity-progress',
    '--to-earliest',
    '--execute',
  ]);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '');

  // consumer-perf-test counts on a terminal as the producer test does.
  const consume = [bin, 'consumer-perf-test', ...bs(), '--topic', 'parity-progress', '--messages', '3000'];
  r = await run('script', ['-qec', inTerminal(consume), '/dev/null'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /\r\d+\/3000 records consumed/);
  assert.match(r.stdout, /, 3000, /, 'the totals line counts every record');
  const consumedPiped = await brook([
    'consumer-perf-test',
    ...bs(),
    '--topic',
    'parity-progress',
    '--messages',
    '3000',
  ]);
  assert.equal(consumedPiped.code, 0, consumedPiped.stderr);
  assert.equal(consumedPiped.stderr, '');

  // dump-log shows which file it is on when its lines go to a file; on the terminal its lines are the progress.
  const dir = join(tools.broker.dataDir, 'parity-progress-0');
  const segment = join(dir, readdirSync(dir).find((f) => f.endsWith('.log'))!);
  const dumped = join(tools.scratch, 'dump.txt');
  r = await run(
    'script',
    ['-qec', `${inTerminal([bin, 'dump-log', '--files', segment])} > '${dumped}'`, '/dev/null'],
    {
      timeoutMs: 60_000,
    },
  );
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /\r\S+\.log \(1\/1\): reading/);
  assert.match(readFileSync(dumped, 'utf8'), /^Dumping .*\nLog starting offset: 0\nbaseOffset: 0 /);
  r = await run('script', ['-qec', inTerminal([bin, 'dump-log', '--files', segment]), '/dev/null'], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /baseOffset: 0 /);
  assert.doesNotMatch(r.stdout, /\(1\/1\): reading/);
});

/** The shell command script(1) runs: node and the tool's arguments, quoted. */
function inTerminal(args: string[]): string {
  return [process.execPath, ...args].map((a) => `'${a}'`).join(' ');
}

test('transactions find-hanging lists an open transaction no coordinator knows, until it is aborted', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'parity-ghost']);
  // A transactional write from a producer id no InitProducerId handed out: the partition holds an open
  // transaction that no coordinator will ever end. KIP-890's verification refuses such a write (the hanging
  // transactions this tool finds come from clusters without it), so it is turned off for the write, as on a
  // cluster that predates it, and on again after.
  const verification = (op: string) => [
    'configs',
    ...bs(),
    '--entity-type',
    'brokers',
    '--entity-default',
    '--alter',
    op,
    op === '--add-config'
      ? 'transaction.partition.verification.enable=false'
      : 'transaction.partition.verification.enable',
  ];
  const off = await brook(verification('--add-config'));
  assert.equal(off.code, 0, off.stderr);
  const client = await WireClient.connect(tools.broker.host, tools.broker.port);
  try {
    const records = buildBatch([{ value: 'g' }], {
      producerId: 424242,
      producerEpoch: 0,
      baseSequence: 0,
      transactional: true,
    });
    const produced = await client.call(ApiKey.PRODUCE, 9, {
      transactionalId: 'parity-ghost-tid',
      acks: -1,
      timeoutMs: 10_000,
      topicData: [{ name: 'parity-ghost', partitionData: [{ index: 0, records }] }],
    });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
  } finally {
    client.close();
    const on = await brook(verification('--delete-config'));
    assert.equal(on.code, 0, on.stderr);
  }
  const find = [
    'transactions',
    ...bs(),
    'find-hanging',
    '--topic',
    'parity-ghost',
    '--max-transaction-timeout',
    '0',
  ];
  let r = await brook(find);
  assert.equal(r.code, 0, r.stderr);
  let rows = tableRows(r.stdout);
  assert.deepEqual(rows[0], [
    'Topic',
    'Partition',
    'ProducerId',
    'ProducerEpoch',
    'CoordinatorEpoch',
    'StartOffset',
    'LastTimestamp',
    'Duration(min)',
  ]);
  assert.deepEqual(rows[1]!.slice(0, 6), ['parity-ghost', '0', '424242', '0', '-1', '0']);
  assert.equal(rows.length, 2);
  r = await brook(['transactions', ...bs(), 'find-hanging', '--topic', 'parity-ghost']);
  assert.equal(tableRows(r.stdout).length, 1, 'younger than the default 15 minutes: not a candidate');

  const abort = ['transactions', ...bs(), 'abort', '--topic', 'parity-ghost', '--partition', '0'];
  r = await brook([
    ...abort,
    '--producer-id',
    '424242',
    '--producer-epoch',
    '0',
    '--coordinator-epoch',
    '-1',
  ]);
  assert.equal(r.code, 0, r.stderr);
  r = await brook(find);
  rows = tableRows(r.stdout);
  assert.equal(rows.length, 1, r.stdout);

  r = await brook(['transactions', ...bs(), 'find-hanging']);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    'The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search\n',
  );
});
