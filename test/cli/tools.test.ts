// Every client tool of `brook` against a real broker process: the lines Kafka's scripts print, --json output,
// and clear errors with a non-zero exit code.

import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { useToolBroker } from '../helpers/tool-broker.js';

const tools = useToolBroker('brook-cli-');
const brook = tools.brook;
const bs = tools.bootstrapArgs;

test('topics: create, list, describe, alter, delete, and errors', async () => {
  let r = await brook([
    'topics',
    ...bs(),
    '--create',
    '--topic',
    'cli-t',
    '--partitions',
    '3',
    '--replication-factor',
    '1',
    '--config',
    'retention.ms=60000',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Created topic cli-t.\n');
  r = await brook(['topics', ...bs(), '--create', '--topic', 'cli-t', '--partitions', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Error while executing topic command : TOPIC_ALREADY_EXISTS/);
  r = await brook(['topics', ...bs(), '--create', '--topic', 'cli-t', '--if-not-exists']);
  assert.equal(r.code, 0);
  r = await brook(['topics', ...bs(), '--list']);
  assert.ok(r.stdout.split('\n').includes('cli-t'));
  r = await brook(['topics', ...bs(), '--describe', '--topic', 'cli-t']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^Topic: cli-t\tTopicId: \S+\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=60000\n/,
  );
  assert.match(r.stdout, /\tTopic: cli-t\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0\n/);
  r = await brook(['topics', ...bs(), '--alter', '--topic', 'cli-t', '--partitions', '4']);
  assert.equal(r.code, 0, r.stderr);
  r = await brook(['topics', ...bs(), '--describe', '--topic', 'cli-t', '--json']);
  const described = JSON.parse(r.stdout);
  assert.equal(described[0].partitionCount, 4);
  assert.equal(described[0].configs['retention.ms'], '60000');
  r = await brook(['topics', ...bs(), '--delete', '--topic', 'cli-t']);
  assert.equal(r.code, 0, r.stderr);
  r = await brook(['topics', ...bs(), '--describe', '--topic', 'cli-t']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Topic 'cli-t' does not exist/);
  r = await brook(['topics', ...bs(), '--list', '--describe']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /exactly one action/);
  r = await brook(['topics', '--bootstrap-server', '127.0.0.1:1', '--list']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^Error: .*127\.0\.0\.1:1/);
});

test('console-producer and console-consumer: keys, headers, printing options, partitions and offsets', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'cli-c', '--partitions', '2']);
  let r = await brook(
    [
      'console-producer',
      ...bs(),
      '--topic',
      'cli-c',
      '--property',
      'parse.key=true',
      '--property',
      'key.separator=:',
      '--property',
      'parse.headers=true',
      '--producer-property',
      'acks=1',
      '--compression-codec',
      'gzip',
    ],
    'h1:a,h2:b\tk1:one\nh1:c\tk1:two\n\tk2:three\n',
  );
  assert.equal(r.code, 0, r.stderr);
  r = await brook([
    'console-consumer',
    ...bs(),
    '--topic',
    'cli-c',
    '--from-beginning',
    '--max-messages',
    '3',
    '--property',
    'print.key=true',
    '--property',
    'print.partition=true',
    '--property',
    'print.offset=true',
    '--property',
    'print.headers=true',
    '--property',
    'print.timestamp=true',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Processed a total of 3 messages/);
  const lines = r.stdout
    .trim()
    .split('\n')
    .sort((a, b) => (a.split('\t').at(-1)! < b.split('\t').at(-1)! ? -1 : 1));
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^CreateTime:\d+\tPartition:\d\tOffset:0\th1:a,h2:b\tk1\tone$/);
  assert.match(lines[1]!, /^CreateTime:\d+\tPartition:\d\tOffset:\d\tNO_HEADERS\tk2\tthree$/);
  assert.match(lines[2]!, /\th1:c\tk1\ttwo$/);
  const k1Partition = /Partition:(\d)/.exec(lines[0]!)![1]!;
  r = await brook([
    'console-consumer',
    ...bs(),
    '--topic',
    'cli-c',
    '--partition',
    k1Partition,
    '--offset',
    '1',
    '--max-messages',
    '1',
  ]);
  assert.equal(r.stdout, 'two\n');
  r = await brook(['console-consumer', ...bs(), '--topic', 'cli-c', '--offset', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /partition is required/);
  r = await brook(
    ['console-producer', ...bs(), '--topic', 'cli-c', '--property', 'parse.key=true'],
    'no-separator-here\n',
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /No key separator found on line number 1/);
  r = await brook([
    'console-consumer',
    ...bs(),
    '--topic',
    'cli-c',
    '--group',
    'cli-group',
    '--from-beginning',
    '--max-messages',
    '3',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, 3);
  r = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'cli-group', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const lag = JSON.parse(r.stdout)[0].partitions;
  assert.equal(
    lag.reduce((n: number, p: { currentOffset: number }) => n + p.currentOffset, 0),
    3,
    'the group committed what it printed',
  );
  r = await brook([
    'consumer-groups',
    ...bs(),
    '--reset-offsets',
    '--group',
    'cli-group',
    '--topic',
    'cli-c',
    '--to-earliest',
    '--execute',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /GROUP\s+TOPIC\s+PARTITION\s+NEW-OFFSET\n\s*cli-group\s+cli-c\s+0\s+0/);
  r = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'cli-group']);
  assert.match(r.stdout, /CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG/);
  assert.match(r.stdout, /has no active members/);
  r = await brook(['consumer-groups', ...bs(), '--list']);
  assert.ok(r.stdout.split('\n').includes('cli-group'));
});

test('get-offsets and delete-records', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'cli-o', '--partitions', '1']);
  await brook(['console-producer', ...bs(), '--topic', 'cli-o'], 'a\nb\nc\nd\ne\n');
  let r = await brook(['get-offsets', ...bs(), '--topic', 'cli-o']);
  assert.equal(r.stdout, 'cli-o:0:5\n');
  const file = join(tools.scratch, 'offsets.json');
  writeFileSync(
    file,
    JSON.stringify({ partitions: [{ topic: 'cli-o', partition: 0, offset: 3 }], version: 1 }),
  );
  r = await brook(['delete-records', ...bs(), '--offset-json-file', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    'Executing records delete operation\nRecords delete operation completed:\npartition: cli-o-0\tlow_watermark: 3\n',
  );
  r = await brook(['get-offsets', ...bs(), '--topic', 'cli-o', '--time', '-2', '--json']);
  assert.deepEqual(JSON.parse(r.stdout), [{ topic: 'cli-o', partition: 0, offset: 3 }]);
  // As Kafka's DeleteRecordsCommand: a partition named twice refuses the whole file before anything is deleted.
  writeFileSync(
    file,
    JSON.stringify({
      partitions: [
        { topic: 'cli-o', partition: 0, offset: 4 },
        { topic: 'cli-o', partition: 0, offset: 5 },
      ],
      version: 1,
    }),
  );
  r = await brook(['delete-records', ...bs(), '--offset-json-file', file]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, 'Offset json file contains duplicate topic partitions: cli-o-0\n');
  r = await brook(['get-offsets', ...bs(), '--topic', 'cli-o', '--time', '-2']);
  assert.equal(r.stdout, 'cli-o:0:3\n');
  r = await brook(['get-offsets', ...bs(), '--topic', 'cli-missing']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /does not exist/);
});

test('configs: describe and alter a topic, describe a broker', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'cli-cfg']);
  let r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--entity-type',
    'topics',
    '--entity-name',
    'cli-cfg',
    '--add-config',
    'retention.ms=1000,cleanup.policy=[compact,delete]',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Completed updating config for topic cli-cfg.\n');
  r = await brook(['configs', ...bs(), '--describe', '--topic', 'cli-cfg']);
  assert.match(r.stdout, /^Dynamic configs for topic cli-cfg are:\n/);
  assert.match(
    r.stdout,
    /\n {2}cleanup.policy=compact,delete sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete/,
  );
  assert.match(r.stdout, /\n {2}retention.ms=1000 sensitive=false/);
  r = await brook(['configs', ...bs(), '--alter', '--topic', 'cli-cfg', '--delete-config', 'retention.ms']);
  assert.equal(r.code, 0, r.stderr);
  r = await brook(['configs', ...bs(), '--describe', '--topic', 'cli-cfg', '--json']);
  const names = JSON.parse(r.stdout)[0].configs.map((c: { name: string }) => c.name);
  assert.deepEqual(names, ['cleanup.policy']);
  r = await brook([
    'configs',
    ...bs(),
    '--describe',
    '--entity-type',
    'brokers',
    '--entity-name',
    '0',
    '--all',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^All configs for broker 0 are:\n/);
  assert.match(r.stdout, /\n {2}log.dirs=/);
  r = await brook(['configs', ...bs(), '--alter', '--topic', 'cli-cfg', '--add-config', 'no.such.config=1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /INVALID_CONFIG|UNKNOWN|not/i);
});

test('configs: client quotas of users, clients and defaults as kafka-configs', async () => {
  let r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--entity-type',
    'users',
    '--entity-name',
    'cli-alice',
    '--entity-type',
    'clients',
    '--entity-name',
    'cli-app',
    '--add-config',
    'producer_byte_rate=1048576,request_percentage=50',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Completed updating config for user cli-alice.\n');
  r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--entity-type',
    'clients',
    '--entity-default',
    '--add-config',
    'consumer_byte_rate=20000000',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Completed updating default config for clients in the cluster.\n');
  r = await brook(['configs', ...bs(), '--describe', '--user', 'cli-alice', '--client', 'cli-app']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "Quota configs for user-principal 'cli-alice', client-id 'cli-app' are producer_byte_rate=1048576.0, request_percentage=50.0\n",
  );
  r = await brook(['configs', ...bs(), '--describe', '--entity-type', 'clients', '--entity-default']);
  assert.equal(r.stdout, 'Quota configs for the default client-id are consumer_byte_rate=2.0E7\n');
  r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--user',
    'cli-alice',
    '--client',
    'cli-app',
    '--delete-config',
    'request_percentage',
  ]);
  assert.equal(r.code, 0, r.stderr);
  r = await brook(['configs', ...bs(), '--describe', '--user', 'cli-alice', '--client', 'cli-app']);
  assert.match(r.stdout, /are producer_byte_rate=1048576\.0\n$/);
  r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--entity-type',
    'clients',
    '--entity-name',
    'cli-app',
    '--delete-config',
    'producer_byte_rate',
  ]);
  assert.equal(r.code, 1, 'deleting a key the entity does not have');
  assert.match(r.stderr, /Invalid config\(s\): producer_byte_rate/);
  r = await brook([
    'configs',
    ...bs(),
    '--alter',
    '--entity-type',
    'clients',
    '--entity-name',
    'cli-app',
    '--add-config',
    'producer_byte_rate=1.5',
  ]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /producer_byte_rate cannot be a fractional value/);
});

test('perf tests print Kafka lines; dump-log decodes the segment and its indexes', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'cli-perf']);
  let r = await brook([
    'producer-perf-test',
    ...bs(),
    '--topic',
    'cli-perf',
    '--num-records',
    '2000',
    '--record-size',
    '100',
    '--throughput',
    '-1',
    '--producer-props',
    'acks=1 linger.ms=2',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /2000 records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.\n$/,
  );
  r = await brook([
    'consumer-perf-test',
    ...bs(),
    '--topic',
    'cli-perf',
    '--messages',
    '2000',
    '--timeout',
    '5000',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [header, line] = r.stdout.trim().split('\n');
  assert.match(
    header!,
    /^start\.time, end\.time, data\.consumed\.in\.MB, MB\.sec, data\.consumed\.in\.nMsg, nMsg\.sec/,
  );
  assert.equal(line!.split(', ')[4], '2000');

  await brook(
    ['console-producer', ...bs(), '--topic', 'cli-dump', '--property', 'parse.key=true'],
    'k\tv1\nk\tv2\n',
  );
  const dir = join(tools.broker.dataDir, 'cli-dump-0');
  const segment = readdirSync(dir).find((f) => f.endsWith('.log'))!;
  r = await brook(['dump-log', '--files', join(dir, segment), '--print-data-log']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Dumping .*00000000000000000000\.log\nLog starting offset: 0\n/);
  assert.match(
    r.stdout,
    /baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: \d+ producerEpoch: 0 .* magic: 2 compresscodec: none crc: \d+ isvalid: true/,
  );
  assert.match(
    r.stdout,
    /\| offset: 0 CreateTime: \d+ keySize: 1 valueSize: 2 sequence: 0 headerKeys: \[\] key: k payload: v1\n/,
  );
  assert.match(r.stdout, /\| offset: 1 .* payload: v2\n/);
  const index = join(dir, segment.replace('.log', '.index'));
  r = await brook([
    'dump-log',
    '--files',
    `${index},${join(dir, segment.replace('.log', '.timeindex'))}`,
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const dumped = JSON.parse(r.stdout);
  assert.equal(dumped.length, 2);
  assert.ok(Array.isArray(dumped[0].entries));
  r = await brook(['dump-log', '--files', join(tools.scratch, 'missing.log')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /ENOENT/);
});

test('console-consumer --include with --timeout-ms; consumer-groups --state, --members and --delete', async () => {
  await brook(['topics', ...bs(), '--create', '--topic', 'inc-a']);
  await brook(['topics', ...bs(), '--create', '--topic', 'inc-b']);
  await brook(['console-producer', ...bs(), '--topic', 'inc-a'], 'x\n');
  await brook(['console-producer', ...bs(), '--topic', 'inc-b'], 'y\n');
  let r = await brook([
    'console-consumer',
    ...bs(),
    '--include',
    'inc-.*',
    '--group',
    'inc-group',
    '--from-beginning',
    '--timeout-ms',
    '3000',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').sort(), ['x', 'y']);
  assert.match(r.stderr, /Processed a total of 2 messages/);
  r = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'inc-group', '--state', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout)[0].state, 'Empty');
  r = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'inc-group', '--members']);
  assert.match(r.stdout, /GROUP\s+CONSUMER-ID\s+HOST\s+CLIENT-ID\s+#PARTITIONS/);
  r = await brook(['consumer-groups', ...bs(), '--delete', '--group', 'inc-group']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Deletion of requested consumer groups ('inc-group') was successful.\n");
  r = await brook(['consumer-groups', ...bs(), '--describe', '--group', 'inc-group']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Consumer group 'inc-group' does not exist/);
});
