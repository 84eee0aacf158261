// The tools people expect from Kafka's bin directory, run as `bin/brook` against a broker process: the option
// shapes Kafka's scripts take and the output lines they print, so scripts written for Kafka parse Brook's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import { ApiKey } from '../../src/protocol/registry.js';
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
  assert.match(r.stderr, /^a command is required: one of list, describe, describe-producers, abort\n/);
  r = await brook(['transactions', ...bs(), 'abort', '--topic', 'parity-txn', '--partition', '0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^The transaction to abort must be identified either with --start-offset/);
});
