// KIP-618's fencing of the distributed herder itself, on in-process distributed workers with
// exactly.once.source.support=enabled against a broker process: the leader writes the config topic through a
// transactional producer (transactional.id `connect-cluster-<group.id>`) claimed when it becomes leader, so a
// zombie leader (a config writer that claimed the id before the current leader) is fenced: its write fails with
// PRODUCER_FENCED and neither the workers nor a read_committed reader of the config topic ever see it. And a
// source task whose task config generation was superseded while it was being started (a new commit record read
// before its producer is initialized) never starts: the new generation's task does. SourceTask.commitRecord() is
// called only once a read_committed consumer sees the record (after its transaction commits), never for a record
// of an aborted transaction.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Consumer } from '../../src/client/index.js';
import {
  ConfigStore,
  leaderTransactionalId,
  PrivilegedWriteException,
} from '../../src/connect/runtime/distributed/config-store.js';
import {
  type DistributedWorker,
  startDistributed,
} from '../../src/connect/runtime/distributed/distributed.js';
import { internalTopicLogs } from '../../src/connect/runtime/distributed/kafka-based-log.js';
import { Loggers } from '../../src/connect/runtime/loggers.js';
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { distributedWorkerProps, pluginDirWith, rest } from '../helpers/connect-worker.js';
import { committedRecords, taskEvents } from '../helpers/counting-source.js';
import { eventually } from '../helpers/wait.js';

const GROUP = 'eos-leader-cluster';
const CONFIG_TOPIC = 'eosl-configs';
let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];
const stores: ConfigStore[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-eos-leader-'));
  pluginDirWith(dir, 'counting-source');
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  for (const s of stores) await s.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function workerProps(group = GROUP, prefix = 'eosl'): Record<string, string> {
  return distributedWorkerProps(broker.bootstrap, prefix, {
    'group.id': group,
    'exactly.once.source.support': 'enabled',
    'plugin.path': join(dir, 'plugins'),
  });
}

/** Every record of the config topic as a consumer with the given isolation sees it, with its offset. */
async function readConfigTopic(
  isolation: 'read_committed' | 'read_uncommitted',
  topic = CONFIG_TOPIC,
): Promise<{ records: { key: string; value: string; offset: number }[]; end: number }> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: isolation });
  try {
    const tp = { topic, partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    const records: { key: string; value: string; offset: number }[] = [];
    const deadline = Date.now() + 30_000;
    while ((await consumer.position(tp)) < end!.offset && Date.now() < deadline) {
      for (const r of await consumer.poll(500))
        records.push({ key: r.key?.toString() ?? '', value: r.value?.toString() ?? '', offset: r.offset });
    }
    return { records, end: end!.offset };
  } finally {
    await consumer.close();
  }
}

function sourceConfig(name: string): Record<string, string> {
  return {
    'connector.class': 'FileStreamSource',
    file: join(dir, `${name}.txt`),
    topic: `eosl-${name}`,
    'tasks.max': '1',
  };
}

test('a zombie leader is fenced from the config topic once a new leader claims its transactional writer', async () => {
  // The old leader: the config store of a worker that led the group and claimed the writer. Its writes succeed.
  const config = loadWorkerConfig(workerProps(), 'distributed');
  const fencedErrors: unknown[] = [];
  const zombie = new ConfigStore(internalTopicLogs(config, new Loggers(() => {})).config, () => {}, {
    transactionalId: leaderTransactionalId(GROUP),
    onFenced: (err) => fencedErrors.push(err),
  });
  stores.push(zombie);
  await zombie.start();
  await zombie.claimWritePrivileges();
  assert.ok(zombie.hasWritePrivileges());
  await zombie.putConnectorConfig('before-takeover', sourceConfig('before-takeover'), 'STOPPED');

  // A new leader: the worker that forms the group now claims `connect-cluster-<group.id>` as it becomes leader.
  const lines: string[] = [];
  const w = await startDistributed(workerProps(), (l) => lines.push(l));
  workers.push(w);
  await eventually(async () => w.herder.leaderUrl() !== null, 30_000, 'a leader');
  assert.ok(lines.some((l) => l.includes('Claiming write privileges for the config topic')));

  // The zombie still thinks it leads: its write is refused by the transaction coordinator.
  await assert.rejects(
    zombie.putConnectorConfig('zombie', sourceConfig('zombie'), 'STOPPED'),
    (err: unknown) => {
      assert.ok(err instanceof PrivilegedWriteException, String(err));
      assert.match((err as Error).message, /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH/);
      return true;
    },
  );
  assert.equal(fencedErrors.length, 1);
  assert.equal(zombie.hasWritePrivileges(), false);

  // The new leader's writes succeed, and the workers see the old leader's config but never the zombie's.
  const created = await rest(w.restUrl, 'POST', '/connectors', {
    name: 'after-takeover',
    config: sourceConfig('after-takeover'),
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const list = await rest(w.restUrl, 'GET', '/connectors');
  assert.deepEqual(list.body, ['after-takeover', 'before-takeover']);

  // A read_committed reader of the config topic sees the same: nothing of the zombie.
  const committed = await readConfigTopic('read_committed');
  const keys = committed.records.map((r) => r.key);
  assert.ok(keys.includes('connector-before-takeover'), keys.join(','));
  assert.ok(keys.includes('connector-after-takeover'), keys.join(','));
  assert.ok(!keys.some((k) => k.endsWith('-zombie')), keys.join(','));
  // The leader's writes are transactions: each ends with a commit marker, an offset that holds no record.
  const last = committed.records.find((r) => r.key === 'connector-after-takeover')!;
  const next = committed.records.find((r) => r.offset > last.offset)?.offset ?? committed.end;
  assert.ok(next > last.offset + 1, `a commit marker after offset ${last.offset} (next ${next})`);
});

test('a worker that takes the leadership over claims the writer and its config writes succeed', async () => {
  const first = workers[0]!;
  const second = await startDistributed(workerProps(), () => {});
  workers.push(second);
  await eventually(
    async () =>
      second.herder.leaderUrl() !== null && (await rest(second.restUrl, 'GET', '/connectors')).status === 200,
    30_000,
    'the second worker in the group',
  );
  // The leader leaves: the survivor becomes leader, claims the writer and takes changes.
  await first.stop();
  workers.shift();
  let created: { status: number; body: unknown } = { status: 0, body: null };
  await eventually(
    async () => {
      created = await rest(second.restUrl, 'POST', '/connectors', {
        name: 'after-second-takeover',
        config: sourceConfig('after-second-takeover'),
        initial_state: 'STOPPED',
      });
      return created.status === 201;
    },
    60_000,
    'the new leader to accept a connector',
  );
  const committed = await readConfigTopic('read_committed');
  assert.ok(committed.records.some((r) => r.key === 'connector-after-second-takeover'));
});

test('a source task whose task generation changed while it was starting never starts; the new generation does', async () => {
  for (const w of workers.splice(0)) await w.stop();
  const group = 'eos-generation-cluster';
  const props = workerProps(group, 'eosg');
  // Another writer of the config topic (plain writes, visible to read_committed readers), used to commit a new
  // task config generation at the moment the worker is about to start a task of the previous one.
  const writer = new ConfigStore(
    internalTopicLogs(loadWorkerConfig(props, 'distributed'), new Loggers(() => {})).config,
    () => {},
  );
  stores.push(writer);
  const lines: string[] = [];
  let bumped = false;
  const w = await startDistributed(props, (l) => lines.push(l), {
    async beforeTaskStart(id, generation) {
      if (id.connector !== 'gen') return;
      taskEvents.push(`launch ${id.task} generation ${generation}`);
      if (bumped) return;
      bumped = true;
      // The same task configs committed again: a new generation, read by the worker before the task starts.
      await writer.start();
      await writer.putTaskConfigs(
        'gen',
        w.herder.taskConfigs('gen').map((t) => t.config),
      );
      taskEvents.push('new generation committed');
    },
  });
  workers.push(w);
  await eventually(async () => w.herder.leaderUrl() !== null, 30_000, 'a leader');
  const created = await rest(w.restUrl, 'POST', '/connectors', {
    name: 'gen',
    config: {
      'connector.class': 'test.CountingSourceConnector',
      topic: 'eosg-out',
      'tasks.max': '1',
      'records.max': '30',
      'exactly.once.support': 'required',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const values = async () => {
    const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: 'read_committed' });
    try {
      const tp = { topic: 'eosg-out', partition: 0 };
      consumer.assign([tp]);
      await consumer.seekToBeginning([tp]);
      const [end] = await consumer.endOffsets([tp]);
      const out: string[] = [];
      const deadline = Date.now() + 30_000;
      while ((await consumer.position(tp)) < end!.offset && Date.now() < deadline)
        for (const r of await consumer.poll(500)) out.push(r.value?.toString() ?? '');
      return out;
    } catch {
      return [];
    } finally {
      await consumer.close();
    }
  };
  await eventually(async () => (await values()).length >= 30, 90_000, 'the 30 records of the task');

  // The task launched for generation 1 was refused by its generation check; only generation 2's task started.
  assert.deepEqual(
    taskEvents,
    ['launch 0 generation 1', 'new generation committed', 'launch 0 generation 2', 'start 0'],
    lines.filter((l) => l.includes('gen-0')).join('\n'),
  );
  assert.ok(
    lines.some((l) =>
      l.includes(
        'Failed to start source task gen-0 as its task generation has changed since it was assigned to this worker',
      ),
    ),
  );
  const got = await values();
  assert.deepEqual(
    got,
    [...Array(30).keys()].map((n) => `0-${n}`),
  );
  const status = await rest(w.restUrl, 'GET', '/connectors/gen/status');
  assert.equal((status.body as { tasks: { state: string }[] }).tasks[0]?.state, 'RUNNING');
});

test('exactly-once: commitRecord() follows the commit of the transaction holding the record, never an abort', async () => {
  const w = workers[0]!;
  committedRecords.length = 0;
  const base = {
    'connector.class': 'test.CountingSourceConnector',
    'tasks.max': '1',
    'records.max': '12',
    'exactly.once.support': 'required',
    'commit.record.check': 'true',
    'check.bootstrap.servers': broker.bootstrap,
  };
  // Interval boundaries: the records are acknowledged long before their transaction commits.
  const interval = await rest(w.restUrl, 'POST', '/connectors', {
    name: 'cr-interval',
    config: {
      ...base,
      topic: 'eosg-cr-interval',
      'transaction.boundary': 'interval',
      'transaction.boundary.interval.ms': '3000',
    },
  });
  assert.equal(interval.status, 201, JSON.stringify(interval.body));
  // Connector boundaries: every other poll's records are aborted.
  const connector = await rest(w.restUrl, 'POST', '/connectors', {
    name: 'cr-connector',
    config: { ...base, topic: 'eosg-cr-connector', 'transaction.boundary': 'connector' },
  });
  assert.equal(connector.status, 201, JSON.stringify(connector.body));
  const of = (topic: string) => committedRecords.filter((c) => c.topic === topic);
  await eventually(
    async () => of('eosg-cr-interval').length >= 12 && of('eosg-cr-connector').length >= 12,
    90_000,
    'commitRecord() for the 12 records of each connector',
  );
  for (const topic of ['eosg-cr-interval', 'eosg-cr-connector']) {
    const calls = of(topic);
    assert.deepEqual(
      calls.map((c) => c.value),
      [...Array(12).keys()].map((n) => `0-${n}`),
      `${topic}: one commitRecord() per committed record, in order, none for aborted ones`,
    );
    assert.deepEqual(
      calls.filter((c) => !c.visibleToReadCommitted).map((c) => c.value),
      [],
      `${topic}: records not yet visible to read_committed consumers when commitRecord() ran`,
    );
  }
});

test('exactly.once.source.support=preparing: the leader already writes configs in transactions', async () => {
  const props = {
    ...workerProps('eos-preparing-cluster', 'eosp'),
    'exactly.once.source.support': 'preparing',
  };
  const lines: string[] = [];
  const w = await startDistributed(props, (l) => lines.push(l));
  workers.push(w);
  await eventually(async () => w.herder.leaderUrl() !== null, 30_000, 'a leader');
  assert.ok(lines.some((l) => l.includes('Claiming write privileges for the config topic')));
  const created = await rest(w.restUrl, 'POST', '/connectors', {
    name: 'prepared',
    config: sourceConfig('prepared'),
    initial_state: 'STOPPED',
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { records, end } = await readConfigTopic('read_uncommitted', 'eosp-configs');
  const written = records.find((r) => r.key === 'connector-prepared');
  assert.ok(written !== undefined, records.map((r) => r.key).join(','));
  const next = records.find((r) => r.offset > written.offset)?.offset ?? end;
  assert.ok(next > written.offset + 1, `a commit marker after offset ${written.offset} (next ${next})`);
});
