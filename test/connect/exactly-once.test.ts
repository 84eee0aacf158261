// Exactly-once source connectors (KIP-618) on two in-process distributed workers with
// exactly.once.source.support=enabled, against a broker process: a two-task source writes through one
// transactional producer per task (transactional.id `${group.id}-${connector}-${task}`) and its offsets land in
// the offsets topic inside the same transactions, so a read_committed consumer sees every record once; the
// config topic holds Kafka's `tasks-fencing-<connector>` record; when the connector is reconfigured from two
// tasks to one, the leader fences the old generation's transactional ids before the new task starts, so a zombie
// producer holding one of them can no longer commit, and the task resumes from its committed offset (no
// duplicates); connector-defined boundaries commit and abort as the task asks; a connector's own
// offsets.storage.topic receives its offsets; and the validation errors Kafka gives for exactly.once.support and
// transaction.boundary.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer, Producer } from '../../src/client/index.js';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, pluginDirWith, rest } from '../helpers/connect-worker.js';
import { eventually, sleep } from '../helpers/wait.js';

const GROUP = 'eos-cluster';
let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-eos-'));
  const pluginDir = pluginDirWith(dir, 'counting-source');
  for (let i = 0; i < 2; i++) workers.push(await start(pluginDir));
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function start(pluginDir: string): Promise<DistributedWorker> {
  return startDistributed(
    distributedWorkerProps(broker.bootstrap, 'eos', {
      'group.id': GROUP,
      'offset.storage.partitions': '2',
      'status.storage.partitions': '2',
      'exactly.once.source.support': 'enabled',
      'plugin.path': pluginDir,
    }),
    () => {},
  );
}

/** Every record value of a topic as a read_committed (or read_uncommitted) consumer sees it, to the end. */
async function readAll(
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted' = 'read_committed',
  partitions = 1,
): Promise<{ key: string | null; value: string | null }[]> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: isolation });
  try {
    const tps = [...Array(partitions).keys()].map((partition) => ({ topic, partition }));
    consumer.assign(tps);
    await consumer.seekToBeginning(tps);
    const ends = await consumer.endOffsets(tps);
    const behind = async () => {
      for (const e of ends) if ((await consumer.position(e)) < e.offset) return true;
      return false;
    };
    const out: { key: string | null; value: string | null }[] = [];
    const deadline = Date.now() + 30_000;
    while ((await behind()) && Date.now() < deadline) {
      for (const r of await consumer.poll(500))
        out.push({ key: r.key?.toString() ?? null, value: r.value?.toString() ?? null });
    }
    return out;
  } finally {
    await consumer.close();
  }
}

async function taskStates(url: string, name: string): Promise<string[]> {
  const r = await rest(url, 'GET', `/connectors/${name}/status`);
  if (r.status !== 200) return [];
  const s = r.body as { connector: { state: string }; tasks: { state: string }[] };
  return [s.connector.state, ...s.tasks.map((t) => t.state)];
}

function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const v of values) {
    if (seen.has(v)) out.push(v);
    seen.add(v);
  }
  return out;
}

test('exactly-once source: transactional records and offsets, zombie fencing, connector-defined boundaries', async () => {
  const [w1] = workers as [DistributedWorker, DistributedWorker];
  await eventually(async () => w1.herder.leaderUrl() !== null, 30_000, 'a leader');
  const url = w1.restUrl;

  // Validation: Kafka's messages on exactly.once.support and transaction.boundary.
  const stdin = await rest(url, 'PUT', '/connector-plugins/FileStreamSource/config/validate', {
    'connector.class': 'FileStreamSource',
    topic: 'x',
    'exactly.once.support': 'required',
    'transaction.boundary': 'connector',
  });
  const errorsOf = (body: unknown, key: string) =>
    (body as { configs: { value: { name: string; errors: string[] } }[] }).configs.find(
      (c) => c.value.name === key,
    )?.value.errors;
  assert.deepEqual(errorsOf(stdin.body, 'exactly.once.support'), [
    'The connector does not support exactly-once semantics with the provided configuration.',
  ]);
  assert.deepEqual(errorsOf(stdin.body, 'transaction.boundary'), [
    'The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.',
  ]);
  const refused = await rest(url, 'POST', '/connectors', {
    name: 'refused',
    config: { 'connector.class': 'FileStreamSource', topic: 'x', 'exactly.once.support': 'required' },
  });
  assert.equal(refused.status, 400);
  assert.match(JSON.stringify(refused.body), /does not support exactly-once semantics/);

  // Two tasks, exactly once, poll boundaries, the connector's own offsets topic.
  const config = {
    'connector.class': 'test.CountingSourceConnector',
    topic: 'eos-out',
    'tasks.max': '2',
    'records.max': '60',
    'exactly.once.support': 'required',
    'offsets.storage.topic': 'eos-count-offsets',
  };
  const created = await rest(url, 'POST', '/connectors', { name: 'count', config });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const expected = (tasks: number[], n: number) =>
    tasks.flatMap((t) => [...Array(n).keys()].map((i) => `${t}-${i}`));
  await eventually(
    async () => (await readAll('eos-out')).length >= 120,
    90_000,
    'the 120 records of two tasks',
  );
  let values = (await readAll('eos-out')).map((r) => r.value!);
  assert.deepEqual(duplicates(values), []);
  assert.deepEqual([...values].sort(), expected([0, 1], 60).sort());

  // The offsets are in the connector's topic (written in the transactions) and copied to the worker's.
  await eventually(
    async () => (await readAll('eos-count-offsets', 'read_committed', 2)).some((r) => r.value === '{"n":59}'),
    30_000,
    'the last offsets in the connector offsets topic',
  );
  const offsets = await rest(url, 'GET', '/connectors/count/offsets');
  assert.deepEqual(
    (offsets.body as { offsets: { partition: { task: number }; offset: { n: number } }[] }).offsets
      .map((o) => `${o.partition.task}:${o.offset.n}`)
      .sort(),
    ['0:59', '1:59'],
  );
  const globalCopy = await readAll('eos-offsets', 'read_committed', 2);
  assert.ok(globalCopy.some((r) => r.key === '["count",{"task":1}]' && r.value === '{"n":59}'));

  // Kafka's task count record in the config topic.
  const fencingRecords = (await readAll('eos-configs', 'read_uncommitted')).filter(
    (r) => r.key === 'tasks-fencing-count',
  );
  assert.deepEqual(
    fencingRecords.map((r) => r.value),
    ['{"task-count":2}'],
  );

  // A zombie: a producer holding task 1's transactional id, in the middle of a transaction.
  assert.equal((await rest(url, 'PUT', '/connectors/count/stop')).status, 204);
  await eventually(async () => (await taskStates(url, 'count'))[0] === 'STOPPED', 30_000, 'stopped');
  const zombie = new Producer({ bootstrapServers: broker.bootstrap, transactionalId: `${GROUP}-count-1` });
  try {
    await zombie.initTransactions();
    zombie.beginTransaction();
    await zombie.send({ topic: 'eos-out', value: Buffer.from('zombie') });

    // One task now, 90 records: the leader fences both old ids before task 0 starts again.
    const updated = await rest(url, 'PUT', '/connectors/count/config', {
      ...config,
      'tasks.max': '1',
      'records.max': '90',
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal((await rest(url, 'PUT', '/connectors/count/resume')).status, 202);
    await eventually(
      async () => (await readAll('eos-out')).filter((r) => r.value!.startsWith('0-')).length >= 90,
      90_000,
      'task 0 to reach 90 records',
    );
    await assert.rejects(zombie.commitTransaction(), /fenced|epoch/i);
  } finally {
    await zombie.close().catch(() => {});
  }
  values = (await readAll('eos-out')).map((r) => r.value!);
  assert.ok(!values.includes('zombie'), 'the zombie transaction is never visible');
  assert.deepEqual(duplicates(values), []);
  assert.deepEqual([...values].sort(), [...expected([0], 90), ...expected([1], 60)].sort());
  assert.deepEqual(
    (await readAll('eos-configs', 'read_uncommitted'))
      .filter((r) => r.key === 'tasks-fencing-count')
      .map((r) => r.value),
    ['{"task-count":2}', '{"task-count":1}'],
  );
  // The fence endpoint is internal: without a session key signature, Kafka's 400.
  assert.deepEqual(await rest(workers[1]!.restUrl, 'PUT', '/connectors/count/fence'), {
    status: 400,
    body: { error_code: 400, message: 'Internal request missing required signature' },
  });

  // Connector-defined boundaries: committed batches seen, aborted ones never.
  const byConnector = await rest(url, 'POST', '/connectors', {
    name: 'bounded',
    config: {
      'connector.class': 'test.CountingSourceConnector',
      topic: 'eos-bounded',
      'tasks.max': '1',
      'records.max': '30',
      'exactly.once.support': 'required',
      'transaction.boundary': 'connector',
    },
  });
  assert.equal(byConnector.status, 201, JSON.stringify(byConnector.body));
  await eventually(async () => (await readAll('eos-bounded')).length >= 30, 90_000, 'the bounded records');
  await sleep(1000);
  const bounded = (await readAll('eos-bounded')).map((r) => r.value!);
  assert.deepEqual(bounded, expected([0], 30));
  assert.deepEqual(await taskStates(url, 'bounded'), ['RUNNING', 'RUNNING']);
});
