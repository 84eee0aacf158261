// `brook reassign-partitions` and `brook leader-election` against one broker process: Kafka's output lines for
// what one broker can show (generate, list, verify, no-op elections) and every refusal with exit code 1. The
// moves themselves run in test/cluster/reassignment.test.ts.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { partitionLine, replicationFactor } from '../../src/cli/topics.js';
import { type BrokerProcess, run, startBroker } from '../helpers/broker-process.js';

const BROOK = resolve(import.meta.dirname, '../../../bin/brook');
let broker: BrokerProcess;
let scratch: string;

before(async () => {
  broker = await startBroker();
  scratch = mkdtempSync(join(tmpdir(), 'brook-reassign-cli-'));
  const created = await brook('topics', '--create', '--topic', 'gen-t', '--partitions', '2');
  assert.equal(created.code, 0, created.stderr);
});

after(async () => {
  await broker?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

function brook(command: string, ...args: string[]) {
  return run(process.execPath, [BROOK, command, '--bootstrap-server', broker.bootstrap, ...args], {
    timeoutMs: 60_000,
  });
}

function file(name: string, content: unknown): string {
  const path = join(scratch, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const onBroker0 = (partition: number) => ({ topic: 'gen-t', partition, replicas: [0], log_dirs: ['any'] });

test('reassign-partitions --generate prints the current and a proposed assignment in Kafka JSON', async () => {
  const topics = file('topics.json', { topics: [{ topic: 'gen-t' }], version: 1 });
  const r = await brook(
    'reassign-partitions',
    '--generate',
    '--topics-to-move-json-file',
    topics,
    '--broker-list',
    '0',
  );
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.stringify({ version: 1, partitions: [onBroker0(0), onBroker0(1)] });
  assert.equal(
    r.stdout,
    `Current partition replica assignment\n${json}\n\nProposed partition reassignment configuration\n${json}\n`,
  );
  const unknown = await brook(
    'reassign-partitions',
    '--generate',
    '--topics-to-move-json-file',
    topics,
    '--broker-list',
    '0,5',
  );
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /not in the cluster: 5/);
});

test('reassign-partitions --list, --verify and --cancel with nothing in progress', async () => {
  const moves = file('same.json', {
    version: 1,
    partitions: [{ topic: 'gen-t', partition: 1, replicas: [0] }],
  });
  let r = await brook('reassign-partitions', '--list');
  assert.equal(r.stdout, 'No partition reassignments found.\n');
  r = await brook('reassign-partitions', '--verify', '--reassignment-json-file', moves);
  // Nothing moves any more, so the throttles come off, as Kafka's tool does whether any were set or not.
  assert.equal(
    r.stdout,
    'Status of partition reassignment:\nReassignment of partition gen-t-1 is completed.\n' +
      'Clearing broker-level throttles on broker 0\nClearing topic-level throttles on topic gen-t\n',
  );
  r = await brook('reassign-partitions', '--cancel', '--reassignment-json-file', moves);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'None of the specified partition moves are active.\n');
});

test('reassign-partitions --verify shows the stage it waits for on a terminal, and nothing in a script', async () => {
  // A log directory named for each replica: --verify also reads the brokers' log directories.
  const moves = file('verify-progress.json', {
    version: 1,
    partitions: [0, 1].map((partition) => ({ ...onBroker0(partition), log_dirs: [broker.dataDir] })),
  });
  const args = [BROOK, 'reassign-partitions', '--bootstrap-server', broker.bootstrap, '--verify'];
  args.push('--reassignment-json-file', moves);
  // script(1) gives the tool a pseudo-terminal for stdin, stdout and stderr and copies what it wrote.
  const quoted = [process.execPath, ...args].map((a) => `'${a}'`).join(' ');
  const tty = await run('script', ['-qec', quoted, '/dev/null'], { timeoutMs: 60_000 });
  assert.equal(tty.code, 0, tty.stdout);
  assert.match(tty.stdout, /\rverifying 2 partitions: listing the reassignments in progress/);
  assert.match(tty.stdout, /\rreading the log directories of broker 0 \(1\/1\)/);
  assert.match(tty.stdout, /Reassignment of partition gen-t-1 is completed\./);
  const piped = await brook('reassign-partitions', '--verify', '--reassignment-json-file', moves);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '');
  assert.match(piped.stdout, /^Status of partition reassignment:\n/);
});

test('reassign-partitions refuses bad actions, files and assignments with exit code 1', async () => {
  const cases: [string[], RegExp][] = [
    [[], /exactly one action/],
    [['--list', '--verify'], /exactly one action/],
    [['--execute'], /reassignment-json-file/],
    [['--execute', '--reassignment-json-file', file('bad.json', '{nope')], /not valid JSON/],
    [
      ['--execute', '--reassignment-json-file', file('empty.json', { version: 1, partitions: [] })],
      /cannot be empty/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('dup.json', { version: 1, partitions: [onBroker0(0), onBroker0(0)] }),
      ],
      /duplicate topic partitions: gen-t-0/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('dupr.json', { version: 1, partitions: [{ topic: 'gen-t', partition: 0, replicas: [0, 0] }] }),
      ],
      /gen-t-0 contains multiple entries for 0/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('dirs.json', { version: 1, partitions: [{ ...onBroker0(0), log_dirs: ['/data', '/x'] }] }),
      ],
      /Size of replicas list \[0\] is different from size of log dirs list/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('nodir.json', { version: 1, partitions: [{ ...onBroker0(0), log_dirs: ['/no/such/log/dir'] }] }),
      ],
      /Failed to alter dir for gen-t-0-0: .*log directory is not configured on the broker/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('missing.json', { version: 1, partitions: [{ topic: 'nope', partition: 0, replicas: [0] }] }),
      ],
      /Topic nope not found/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('p9.json', { version: 1, partitions: [{ topic: 'gen-t', partition: 9, replicas: [0] }] }),
      ],
      /Unable to find partition: gen-t-9/,
    ],
    [
      [
        '--execute',
        '--reassignment-json-file',
        file('dead.json', { version: 1, partitions: [{ topic: 'gen-t', partition: 0, replicas: [0, 7] }] }),
      ],
      /Error reassigning partition\(s\):\ngen-t-0: INVALID_REPLICA_ASSIGNMENT: .*not alive/,
    ],
  ];
  for (const [args, expected] of cases) {
    const r = await brook('reassign-partitions', ...args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, expected, args.join(' '));
  }
});

test('leader-election: a preferred leader already leads; refusals exit 1', async () => {
  let r = await brook(
    'leader-election',
    '--election-type',
    'PREFERRED',
    '--topic',
    'gen-t',
    '--partition',
    '0',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Valid replica already elected for partitions gen-t-0\n');
  const partitions = file('election.json', {
    partitions: [
      { topic: 'gen-t', partition: 1 },
      { topic: 'gen-t', partition: 0 },
    ],
  });
  r = await brook('leader-election', '--election-type', 'unclean', '--path-to-json-file', partitions);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Valid replica already elected for partitions gen-t-0, gen-t-1\n');
  r = await brook('leader-election', '--election-type', 'PREFERRED', '--topic', 'gen-t', '--partition', '9');
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /^Error completing leader election \(PREFERRED\) for partition: gen-t-9: UNKNOWN_TOPIC_OR_PARTITION/,
  );
  assert.match(r.stderr, /1 replica\(s\) could not be elected/);
  const refused: [string[], RegExp][] = [
    [['--election-type', 'PREFERRED'], /One and only one/],
    [
      ['--election-type', 'PREFERRED', '--topic', 'gen-t', '--partition', '0', '--all-topic-partitions'],
      /One and only one/,
    ],
    [['--election-type', 'PREFERRED', '--topic', 'gen-t'], /partition/],
    [['--election-type', 'SOMETIMES', '--all-topic-partitions'], /PREFERRED or UNCLEAN/],
    [['--all-topic-partitions'], /election-type/],
  ];
  for (const [args, expected] of refused) {
    const refusal = await brook('leader-election', ...args);
    assert.equal(refusal.code, 1, args.join(' '));
    assert.match(refusal.stderr, expected, args.join(' '));
  }
});

test('topics --describe shows a partition being reassigned with its adding and removing replicas', () => {
  const p = { partition: 0, leader: 3, replicas: [1, 2, 3], isr: [3, 1] };
  const moving = { addingReplicas: [1, 2], removingReplicas: [3] };
  assert.equal(
    partitionLine('t', p, moving),
    '\tTopic: t\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3,1\tAdding Replicas: 1,2\tRemoving Replicas: 3',
  );
  assert.equal(
    partitionLine('t', p, undefined),
    '\tTopic: t\tPartition: 0\tLeader: 3\tReplicas: 1,2,3\tIsr: 3,1',
  );
  assert.equal(replicationFactor(p, moving), 2, 'the replicas being removed do not count');
  assert.equal(replicationFactor(p, undefined), 3);
});
