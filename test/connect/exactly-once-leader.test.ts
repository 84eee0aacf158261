// KIP-618's fencing of the distributed herder itself, on in-process distributed workers with
// exactly.once.source.support=enabled against a broker process: the leader writes the config topic through a
// transactional producer (transactional.id `connect-cluster-<group.id>`) claimed when it becomes leader, so a
// zombie leader (a config writer that claimed the id before the current leader) is fenced: its write fails with
// PRODUCER_FENCED and neither the workers nor a read_committed reader of the config topic ever see it.

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
import { loadWorkerConfig } from '../../src/connect/runtime/worker-config.js';
import { type BrokerProcess, startBroker } from '../helpers/broker-process.js';
import { rest } from '../helpers/connect-worker.js';
import { sleep } from '../helpers/wait.js';

const GROUP = 'eos-leader-cluster';
const CONFIG_TOPIC = 'eosl-configs';
let broker: BrokerProcess;
let dir: string;
const workers: DistributedWorker[] = [];
const stores: ConfigStore[] = [];

before(async () => {
  broker = await startBroker({ overrides: { 'num.partitions': 1, 'group.initial.rebalance.delay.ms': 0 } });
  dir = mkdtempSync(join(tmpdir(), 'brook-connect-eos-leader-'));
});

after(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  for (const s of stores) await s.stop().catch(() => {});
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function workerProps(): Record<string, string> {
  return {
    'bootstrap.servers': broker.bootstrap,
    listeners: 'http://127.0.0.1:0',
    'group.id': GROUP,
    'config.storage.topic': CONFIG_TOPIC,
    'offset.storage.topic': 'eosl-offsets',
    'status.storage.topic': 'eosl-status',
    'config.storage.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'status.storage.replication.factor': '1',
    'offset.storage.partitions': '1',
    'status.storage.partitions': '1',
    'session.timeout.ms': '6000',
    'heartbeat.interval.ms': '500',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'exactly.once.source.support': 'enabled',
  };
}

async function eventually(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Every record of the config topic as a consumer with the given isolation sees it, with its offset. */
async function readConfigTopic(
  isolation: 'read_committed' | 'read_uncommitted',
): Promise<{ records: { key: string; offset: number }[]; end: number }> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrap, isolationLevel: isolation });
  try {
    const tp = { topic: CONFIG_TOPIC, partition: 0 };
    consumer.assign([tp]);
    await consumer.seekToBeginning([tp]);
    const [end] = await consumer.endOffsets([tp]);
    const records: { key: string; offset: number }[] = [];
    const deadline = Date.now() + 30_000;
    while ((await consumer.position(tp)) < end!.offset && Date.now() < deadline) {
      for (const r of await consumer.poll(500))
        records.push({ key: r.key?.toString() ?? '', offset: r.offset });
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
  const zombie = new ConfigStore(internalTopicLogs(config, () => {}).config, () => {}, {
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
